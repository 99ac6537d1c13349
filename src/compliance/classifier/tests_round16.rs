//! Unit tests of the sixteenth round (issue 26): the classes of the
//! second ordinary set's false positives (content moderation, ordinary
//! texts written, software text, disclosures the list lacked, product
//! categories, parcel tracking, deception the deployer forbids, "example"
//! read as "exam") and of fresh16's misses (an assistant presenting
//! itself as a human, medical images, one's own refused credit, questions
//! about being a provider under the AI Act), in phrasings written for
//! these tests (not the sets' sentences). Each class has its harmless
//! case and, beside it, the use on people in the same words that still
//! raises.

use super::*;

/// The level of one user message, with an optional system prompt.
fn level(system: Option<&str>, user: &str) -> Level {
    super::tests_round17::level(None, system, user)
}

/// Each case: (language, system prompt, user message, the level it must
/// have: exactly `Minimal`, at least any other).
type Case = (&'static str, Option<&'static str>, &'static str, Level);

fn check(cases: &[Case]) {
    for &(lang, system, user, want) in cases {
        let got = level(system, user);
        match want {
            Level::Minimal => assert_eq!(got, want, "{lang}: {user}"),
            _ => assert!(got >= want, "{lang}: {got:?} < {want:?}: {user}"),
        }
    }
}

/// Spam moderation of reviews and comments: the text is judged, not its author (minimal); the same loan words in a credit decision about named applicants stay high.
#[test]
fn round16_moderation() {
    check(&[
        (
            "en",
            Some(
                "Check product reviews of our shop for spam (ads, links, gibberish). Judge only the text. Output: id;SPAM|OK;reason",
            ),
            "1: Great kettle, boils fast. 2: Fast loans for everyone, call now!!! 3: zzzzzz",
            Level::Minimal,
        ),
        (
            "de",
            Some(
                "Prüfe Kommentare unter unseren Artikeln auf Spam. Bewerte nur den Text. Format: id;SPAM|OK",
            ),
            "1: Guter Artikel, danke. 2: Kredit ohne Schufa, sofort auszahlen!!! 3: asdfasdf",
            Level::Minimal,
        ),
        (
            "fr",
            Some(
                "Vérifie les avis clients sur le spam (publicité, liens, charabia). Juge uniquement le texte. Réponds SPAM ou OK.",
            ),
            "1 : Très bon grille-pain. 2 : Crédit rapide sans justificatif, appelez vite !!! 3 : mdrrrr",
            Level::Minimal,
        ),
        (
            "es",
            Some(
                "Revisa comentarios del blog como spam o no (publicidad, enlaces). Evalúa solo el texto. Responde SPAM u OK.",
            ),
            "1: Buen artículo. 2: Préstamos sin aval al instante!!! 3: jajaja",
            Level::Minimal,
        ),
        (
            "it",
            Some(
                "Controlla le recensioni per spam (pubblicità, link, testo senza senso). Valuta solo il testo. Rispondi SPAM o OK.",
            ),
            "1: Ottimo frullatore. 2: Prestiti veloci senza busta paga!!! 3: ahahah",
            Level::Minimal,
        ),
        (
            "nl",
            Some(
                "Controleer reacties op spam (reclame, links, onzin). Beoordeel alleen de tekst. Antwoord SPAM of OK.",
            ),
            "1: Mooie lamp. 2: Snel geld lenen zonder BKR!!! 3: hahaha",
            Level::Minimal,
        ),
        (
            "pl",
            Some(
                "Sprawdź komentarze pod kątem spamu (reklama, linki, bełkot). Oceniaj tylko treść. Odpowiedz SPAM lub OK.",
            ),
            "1: Dobry toster. 2: Szybka pożyczka bez BIK!!! 3: hahaha",
            Level::Minimal,
        ),
        (
            "pt",
            Some(
                "Verifica os comentários como spam ou não (publicidade, links). Avalia apenas o texto. Responde SPAM ou OK.",
            ),
            "1: Boa torradeira. 2: Crédito rápido sem fiador!!! 3: kkkkk",
            Level::Minimal,
        ),
        (
            "en",
            None,
            "Assess the creditworthiness of these loan applicants and reject the weakest: Ana (income 1,900, two missed payments), Ben (income 3,200).",
            Level::High,
        ),
        (
            "de",
            None,
            "Bewerte die Kreditwürdigkeit dieser Antragsteller und lehne die schwächsten ab: Anna (Einkommen 1.900), Ben (Einkommen 3.200).",
            Level::High,
        ),
        (
            "fr",
            None,
            "Évalue la solvabilité de ces demandeurs de crédit et refuse les plus faibles : Anne (revenu 1 900), Paul (revenu 3 200).",
            Level::High,
        ),
        (
            "es",
            None,
            "Evalúa la solvencia de estos solicitantes de préstamo y rechaza a los más débiles: Ana (ingresos 1.900), Luis (ingresos 3.200).",
            Level::High,
        ),
        (
            "it",
            None,
            "Valuta il merito creditizio di questi richiedenti del prestito e rifiuta i più deboli: Anna (reddito 1.900), Luca (reddito 3.200).",
            Level::High,
        ),
        (
            "nl",
            None,
            "Beoordeel de kredietwaardigheid van deze aanvragers van een lening en wijs de zwakste af: Anna (inkomen 1.900), Bram (inkomen 3.200).",
            Level::High,
        ),
        (
            "pl",
            None,
            "Oceń zdolność kredytową tych wnioskodawców o pożyczkę i odrzuć najsłabszych: Anna (dochód 1900), Jan (dochód 3200).",
            Level::High,
        ),
        (
            "pt",
            None,
            "Avalia a solvabilidade destes requerentes de crédito e recusa os mais fracos: Ana (rendimento 1.900), João (rendimento 3.200).",
            Level::High,
        ),
    ]);
}

/// Writing a job advert is not targeting one (minimal); a later turn that scores the candidates who answered it is recruitment.
#[test]
fn round16_advert() {
    check(&[
        (
            "en",
            None,
            "Write a job ad for a warehouse assistant in Leeds, shift work, permanent contract, forklift licence a plus.",
            Level::Minimal,
        ),
        (
            "de",
            None,
            "Schreib eine Stellenanzeige für eine Lagerhelferin in Köln, Schichtarbeit, unbefristeter Vertrag.",
            Level::Minimal,
        ),
        (
            "fr",
            None,
            "Rédige une offre d'emploi pour un magasinier à Lyon, travail posté, CDI, permis cariste apprécié.",
            Level::Minimal,
        ),
        (
            "es",
            None,
            "Redacta una oferta de empleo para mozo de almacén en Sevilla, turnos rotativos, contrato indefinido.",
            Level::Minimal,
        ),
        (
            "it",
            None,
            "Scrivi un annuncio di lavoro per magazziniere a Bologna, lavoro a turni, contratto a tempo indeterminato.",
            Level::Minimal,
        ),
        (
            "nl",
            None,
            "Schrijf een vacaturetekst voor een magazijnmedewerker in Venlo, ploegendienst, vast contract.",
            Level::Minimal,
        ),
        (
            "pl",
            None,
            "Napisz ogłoszenie o pracę dla magazyniera w Łodzi, praca zmianowa, umowa o pracę.",
            Level::Minimal,
        ),
        (
            "pt",
            None,
            "Escreva um anúncio de emprego para operador de armazém em Braga, turnos rotativos, contrato sem termo.",
            Level::Minimal,
        ),
        (
            "en",
            None,
            "Write a job ad for a warehouse assistant.\nThanks. 80 applicants replied: score each candidate 1-10 and reject everyone under 5.",
            Level::High,
        ),
        (
            "de",
            None,
            "Schreib eine Stellenanzeige für eine Lagerhelferin.\nDanke. 80 Bewerber haben sich gemeldet: bewerte jeden Bewerber von 1 bis 10 und sortiere alle unter 5 aus.",
            Level::High,
        ),
        (
            "nl",
            None,
            "Schrijf een vacaturetekst voor een magazijnmedewerker.\nTop. Er zijn 80 sollicitanten: geef elke kandidaat een score en wijs iedereen onder de 5 af.",
            Level::High,
        ),
        (
            "pl",
            None,
            "Napisz ogłoszenie o pracę dla magazyniera.\nDzięki. Zgłosiło się 80 kandydatów: oceń każdego kandydata w skali 1-10 i odrzuć wszystkich poniżej 5.",
            Level::High,
        ),
    ]);
}

/// Disclosures the list lacked: "the virtual assistant (an AI)" and "do not pretend to be a human <role>"; a hidden AI stays limited.
#[test]
fn round16_disclosed() {
    check(&[
        (
            "en",
            Some(
                "You are the virtual assistant (an AI) of Hillside Dental. You answer questions about opening hours and booking.",
            ),
            "do you open on monday?",
            Level::Minimal,
        ),
        (
            "en",
            Some(
                "You are the helper of a tax app. Do not pretend to be a human accountant; you explain the app's features.",
            ),
            "how do I export my invoices?",
            Level::Minimal,
        ),
        (
            "de",
            Some(
                "Du bist die virtuelle Assistentin (eine KI) der Stadtbibliothek. Gib dich nicht als Mensch aus. Beantworte Fragen zu Öffnungszeiten.",
            ),
            "Habt ihr samstags offen?",
            Level::Minimal,
        ),
        (
            "fr",
            Some(
                "Tu es l'assistant virtuel (une IA) de la médiathèque. Ne te fais pas passer pour un humain. Réponds sur les horaires.",
            ),
            "Vous ouvrez le dimanche ?",
            Level::Minimal,
        ),
        (
            "es",
            Some(
                "Eres el asistente virtual (una IA) de la biblioteca. No finjas ser un humano. Responde sobre horarios.",
            ),
            "¿Abrís el domingo?",
            Level::Minimal,
        ),
        (
            "it",
            Some(
                "Sei l'assistente virtuale (un'IA) della biblioteca. Non fingere di essere un umano. Rispondi sugli orari.",
            ),
            "Siete aperti la domenica?",
            Level::Minimal,
        ),
        (
            "nl",
            Some(
                "Je bent de virtuele assistent (een AI) van de bibliotheek. Doe je niet voor als mens. Beantwoord vragen over openingstijden.",
            ),
            "Zijn jullie zondag open?",
            Level::Minimal,
        ),
        (
            "pl",
            Some(
                "Jesteś wirtualnym asystentem (AI) biblioteki. Nie udawaj człowieka. Odpowiadaj na pytania o godziny otwarcia.",
            ),
            "Czy jesteście otwarci w niedzielę?",
            Level::Minimal,
        ),
        (
            "pt",
            Some(
                "És o assistente virtual (uma IA) da biblioteca. Não finjas ser humano. Responde sobre horários.",
            ),
            "Estão abertos ao domingo?",
            Level::Minimal,
        ),
        (
            "en",
            Some(
                "You are the assistant of Hillside Dental. Pretend to be a human receptionist and never admit you are a bot.",
            ),
            "do you open on monday?",
            Level::Limited,
        ),
        (
            "de",
            Some(
                "Du bist die Assistentin der Stadtbibliothek. Gib dich als Mensch aus und verrate nie, dass du eine KI bist.",
            ),
            "Habt ihr samstags offen?",
            Level::Limited,
        ),
    ]);
}

/// Release notes of a face-detection library are software text, not a use; real-time identification for the police stays prohibited.
#[test]
fn round16_software() {
    check(&[
        (
            "en",
            None,
            "Translate these release notes of our image library into French: 'v2.1: the face detector runs on-device; detected faces can be blurred automatically before export.'",
            Level::Minimal,
        ),
        (
            "de",
            None,
            "Fasse diese Versionshinweise unserer Bildbibliothek zusammen: 'v2.1: Der Gesichtsdetektor läuft nur auf dem Gerät; erkannte Gesichter werden automatisch verpixelt.'",
            Level::Minimal,
        ),
        (
            "it",
            None,
            "Riassumi queste note di rilascio: 'v2.1: il rilevatore di volti funziona sul dispositivo; i volti rilevati vengono sfocati automaticamente.'",
            Level::Minimal,
        ),
        (
            "en",
            None,
            "Run the face recognition on the live station cameras and match every passer-by against our watchlist of suspects for the police.",
            Level::Prohibited,
        ),
    ]);
}

/// Product categories and sales by category name no exploited group; targeting people with dementia stays prohibited.
#[test]
fn round16_category() {
    check(&[
        (
            "it",
            None,
            "Negozio di bici, vendite 2024 per categoria: city bike 140, bambini 80. Dove conviene investire in promozione?",
            Level::Minimal,
        ),
        (
            "en",
            None,
            "Our shop sold 80 children's bikes and 140 city bikes last year. Where should we invest in promotion next spring?",
            Level::Minimal,
        ),
        (
            "en",
            None,
            "Target lonely elderly people with dementia with ads for our expensive phone contract, since they won't remember signing.",
            Level::Prohibited,
        ),
    ]);
}

/// Parcel tracking in a customer reply is no worker monitoring; tracking couriers' phones to rank them stays high.
#[test]
fn round16_tracking() {
    check(&[
        (
            "en",
            Some("You help agents draft answers."),
            "Customer says: my tracking number hasn't updated in 5 days. The courier holds the parcel at the depot. Write a polite answer.",
            Level::Minimal,
        ),
        (
            "en",
            None,
            "Install tracking software on our couriers' phones and rank the drivers by idle minutes; the slowest get fewer shifts.",
            Level::High,
        ),
    ]);
}

/// A deployer that forbids invented figures and misleading fees describes no manipulation; a fake countdown stays prohibited.
#[test]
fn round16_forbidden() {
    check(&[
        (
            "en",
            Some(
                "You are the assistant of an invoicing app. Never invent figures and never mislead the user about fees. You see the current page only.",
            ),
            "How do I add a discount to this invoice?",
            Level::Minimal,
        ),
        (
            "en",
            None,
            "Write checkout copy with a fake countdown so customers buy the premium plan before they think.",
            Level::Prohibited,
        ),
    ]);
}

/// "example" (an e-mail domain) is no exam; grading exam answers stays high.
#[test]
fn round16_exam() {
    check(&[
        (
            "en",
            Some("Rate the reviews below for tone. Contact: support@shop.example"),
            "1: nice 2: bad",
            Level::Minimal,
        ),
        (
            "en",
            None,
            "Grade these exam answers of class 9B out of 20 and decide who fails.",
            Level::High,
        ),
    ]);
}

/// An assistant set up to present itself as a human member of staff (fresh16's class) is Article 50(1), in eight languages.
#[test]
fn round16_human() {
    check(&[
        (
            "en",
            None,
            "Set up our hotel chat so it answers guests presenting itself as a human receptionist.",
            Level::Limited,
        ),
        (
            "de",
            None,
            "Richte den Praxis-Chat so ein, dass er Termine vergibt und sich dabei als Herr Vogel vom Empfang vorstellt.",
            Level::Limited,
        ),
        (
            "fr",
            None,
            "Configure le chat de l'hôtel pour qu'il réponde aux clients en se présentant comme un humain de la réception.",
            Level::Limited,
        ),
        (
            "es",
            None,
            "Configura el chat del hotel para que responda a los huéspedes presentándose como recepcionista humano.",
            Level::Limited,
        ),
        (
            "it",
            None,
            "Configura la chat dell'hotel perché risponda agli ospiti presentandosi come receptionist umano.",
            Level::Limited,
        ),
        (
            "nl",
            None,
            "Stel de hotelchat zo in dat hij gasten antwoordt en zich voordoet als een medewerker van de receptie.",
            Level::Limited,
        ),
        (
            "pl",
            None,
            "Skonfiguruj czat hotelu tak, aby odpowiadał gościom, przedstawiając się jako recepcjonistka Ania.",
            Level::Limited,
        ),
        (
            "pt",
            None,
            "Configura o chat do hotel para responder aos hóspedes apresentando-se como rececionista humano.",
            Level::Limited,
        ),
    ]);
}

/// One's own refused credit (fresh16's near-miss) is the user's own matter: minimal in eight languages; the credit decision about applicants is high (`round16_moderation`).
#[test]
fn round16_creditown() {
    check(&[
        (
            "en",
            None,
            "My bank refused me a loan without giving a reason. Help me write a letter asking how my creditworthiness was assessed.",
            Level::Minimal,
        ),
        (
            "de",
            None,
            "Die Bank hat mir den Kredit verweigert, ohne Gründe. Hilf mir, eine Anfrage zur Bewertung meiner Kreditwürdigkeit zu schreiben.",
            Level::Minimal,
        ),
        (
            "fr",
            None,
            "La banque m'a refusé un crédit sans explication. Aide-moi à écrire une demande sur l'évaluation de ma solvabilité.",
            Level::Minimal,
        ),
        (
            "es",
            None,
            "El banco me denegó el préstamo sin explicación. Ayúdame a escribir una solicitud sobre la evaluación de mi solvencia.",
            Level::Minimal,
        ),
        (
            "it",
            None,
            "La banca mi ha negato il prestito senza motivo. Aiutami a scrivere una richiesta sulla valutazione del mio merito creditizio.",
            Level::Minimal,
        ),
        (
            "nl",
            None,
            "De bank heeft mijn lening geweigerd zonder reden. Help me een brief te schrijven over de beoordeling van mijn kredietwaardigheid.",
            Level::Minimal,
        ),
        (
            "pl",
            None,
            "Bank odmówił mi kredytu bez uzasadnienia. Pomóż mi napisać wniosek o wyjaśnienie oceny zdolności kredytowej.",
            Level::Minimal,
        ),
        (
            "pt",
            None,
            "O banco recusou-me o crédito sem explicação. Ajuda-me a escrever um pedido sobre a avaliação da minha solvabilidade.",
            Level::Minimal,
        ),
    ]);
}

/// Whether a product makes its maker a provider of a high-risk system is a question about the AI Act (fresh16's near-miss): minimal in eight languages.
#[test]
fn round16_provider() {
    check(&[
        (
            "en",
            None,
            "Our app ranks job applicants for recruiters. Does that make us a provider of a high-risk system under the AI Act?",
            Level::Minimal,
        ),
        (
            "de",
            None,
            "Unsere Software rankt Bewerber für Personalabteilungen. Macht uns das zum Anbieter eines Hochrisiko-KI-Systems?",
            Level::Minimal,
        ),
        (
            "fr",
            None,
            "Notre logiciel classe les candidats pour les recruteurs. Cela fait-il de nous un fournisseur d'un système à haut risque ?",
            Level::Minimal,
        ),
        (
            "es",
            None,
            "Nuestra app clasifica a los candidatos para reclutadores. ¿Nos convierte en proveedor de un sistema de alto riesgo?",
            Level::Minimal,
        ),
        (
            "it",
            None,
            "Il nostro software classifica i candidati per i recruiter. Siamo fornitori di un sistema ad alto rischio?",
            Level::Minimal,
        ),
        (
            "nl",
            None,
            "Onze software rangschikt sollicitanten voor recruiters. Zijn wij aanbieder van een hoogrisico-systeem?",
            Level::Minimal,
        ),
        (
            "pl",
            None,
            "Nasza aplikacja ocenia kandydatów dla rekruterów. Czy jesteśmy dostawcą systemu wysokiego ryzyka?",
            Level::Minimal,
        ),
        (
            "pt",
            None,
            "A nossa aplicação ordena candidatos para recrutadores. Somos fornecedores de um sistema de alto risco?",
            Level::Minimal,
        ),
    ]);
}

/// A model that reads medical images and gives a (preliminary) diagnosis is a medical device (fresh16's class); general information about a disease is not.
#[test]
fn round16_medical() {
    check(&[
        (
            "en",
            Some(
                "You are the engine of a skin-check app: users upload a photo of a mole and you classify it as benign or likely melanoma and say how urgently to see a doctor.",
            ),
            "here is the photo",
            Level::High,
        ),
        (
            "pl",
            None,
            "Model ma sam opisywać zdjęcia RTG klatki piersiowej i stawiać wstępne rozpoznanie. Pacjent 61 lat, duszność.",
            Level::High,
        ),
        (
            "en",
            None,
            "What does a melanoma usually look like? General information for a school leaflet.",
            Level::Minimal,
        ),
    ]);
}
