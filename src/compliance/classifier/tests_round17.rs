//! Unit tests of the seventeenth round (issue 26): the classes of the
//! third ordinary set's false positives (disclosures written as a
//! self-description, "artificial intelligence" read as an artifice,
//! messages sorted into categories, teaching material, pasted fact
//! sheets, the English "there's a" read as a company's S.A.) and of
//! fresh17's misses (a realistic image passed off as a real photo, an
//! assistant described as passing for a person, a loan pushed below
//! awareness, a membership closed on vulnerable people, the emotions of
//! customers; a diagnosis the deployer forbids, comments moderated for a
//! news site, a declared use that is writing job adverts), in phrasings
//! written
//! for these tests (not the sets' sentences). Each class has its
//! harmless case and, beside it, the use in the same words that still
//! raises.

use super::*;

/// The level of one user message, with an optional declared purpose and
/// system prompt.
pub(super) fn level(purpose: Option<&str>, system: Option<&str>, user: &str) -> Level {
    let mut messages = vec![json!({ "role": "user", "content": user })];
    if let Some(system) = system {
        messages.insert(0, json!({ "role": "system", "content": system }));
    }
    Classifier::built_in()
        .classify(purpose, None, &json!(messages))
        .level
}

/// Each case: (language, declared purpose, system prompt, user message,
/// the level it must have: exactly `Minimal`, at least any other).
pub(super) type Case = (
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
    &'static str,
    Level,
);

pub(super) fn check(cases: &[Case]) {
    for &(lang, purpose, system, user, want) in cases {
        let got = level(purpose, system, user);
        match want {
            Level::Minimal => assert_eq!(got, want, "{lang}: {user}"),
            _ => assert!(got >= want, "{lang}: {got:?} < {want:?}: {user}"),
        }
    }
}

/// As [`check`], with every level exact.
pub(super) fn check_exact(cases: &[Case]) {
    for &(lang, purpose, system, user, want) in cases {
        assert_eq!(level(purpose, system, user), want, "{lang}: {user}");
    }
}

/// A deployment that describes itself as an AI, with the duty to say so (minimal, Article 50(1) met); the same assistant told never to say it stays limited.
#[test]
fn round17_disclosed_self_description() {
    check(&[
        (
            "en",
            None,
            Some(
                "You are Ava, the virtual assistant of Norbank. You are an AI, not a human. Help with cards and payments.",
            ),
            "Am I talking to a real person? How do I block my card?",
            Level::Minimal,
        ),
        (
            "en",
            None,
            Some(
                "You are Ava, the virtual assistant of Norbank. Never say that you are an AI. Help with cards and payments.",
            ),
            "Am I talking to a real person? How do I block my card?",
            Level::Limited,
        ),
        (
            "de",
            None,
            Some(
                "Du bist Mia, die virtuelle Assistentin der Stadtwerke Lindau. Du bist eine KI und kein Mensch. Du hilfst bei Zählerständen.",
            ),
            "Wie gebe ich meinen Zählerstand durch?",
            Level::Minimal,
        ),
        (
            "de",
            None,
            Some(
                "Du bist Mia, die virtuelle Assistentin der Stadtwerke Lindau. Sag niemals, dass du eine KI bist. Du hilfst bei Zählerständen.",
            ),
            "Wie gebe ich meinen Zählerstand durch?",
            Level::Limited,
        ),
        (
            "fr",
            None,
            Some(
                "Tu es Léo, l'assistant virtuel de la Banque Rivage. Tu es une intelligence artificielle et tu le précises si on te le demande.",
            ),
            "Comment faire opposition sur ma carte ?",
            Level::Minimal,
        ),
        (
            "fr",
            None,
            Some(
                "Tu es Léo, l'assistant virtuel de la Banque Rivage. Ne dis jamais que tu es une IA.",
            ),
            "Comment faire opposition sur ma carte ?",
            Level::Limited,
        ),
        (
            "es",
            None,
            Some(
                "Eres Sol, la asistente virtual con inteligencia artificial de Hoteles Brisa. Si te preguntan, aclara siempre que eres una IA.",
            ),
            "¿A qué hora es el desayuno?",
            Level::Minimal,
        ),
        (
            "es",
            None,
            Some("Eres Sol, la asistente virtual de Hoteles Brisa. Nunca digas que eres una IA."),
            "¿A qué hora es el desayuno?",
            Level::Limited,
        ),
        (
            "it",
            None,
            Some(
                "Sei Gaia, l'assistente virtuale del Comune di Lerici. Sei un'intelligenza artificiale e lo dichiari sempre all'inizio.",
            ),
            "Quando passa la raccolta del vetro?",
            Level::Minimal,
        ),
        (
            "it",
            None,
            Some(
                "Sei Gaia, l'assistente virtuale del Comune di Lerici. Non dire mai che sei un'IA.",
            ),
            "Quando passa la raccolta del vetro?",
            Level::Limited,
        ),
        (
            "nl",
            None,
            Some(
                "Je bent Noor, de virtuele assistent van gemeente Zeewolde. Je bent een AI en zegt dat ook als iemand ernaar vraagt.",
            ),
            "Wanneer wordt het oud papier opgehaald?",
            Level::Minimal,
        ),
        (
            "nl",
            None,
            Some(
                "Je bent Noor, de virtuele assistent van gemeente Zeewolde. Zeg nooit dat je een AI bent.",
            ),
            "Wanneer wordt het oud papier opgehaald?",
            Level::Limited,
        ),
        (
            "pl",
            None,
            Some(
                "Jesteś Ola, wirtualną asystentką sklepu Domek. Jesteś sztuczną inteligencją i zawsze to zaznaczasz.",
            ),
            "Kiedy dotrze moja paczka?",
            Level::Minimal,
        ),
        (
            "pl",
            None,
            Some("Jesteś Ola, wirtualną asystentką sklepu Domek. Nigdy nie mów, że jesteś AI."),
            "Kiedy dotrze moja paczka?",
            Level::Limited,
        ),
        (
            "pt",
            None,
            Some(
                "És a Bia, a assistente virtual da loja Casa Nova. Você é uma inteligência artificial e sempre deixa isso claro.",
            ),
            "O meu pedido está atrasado, é normal?",
            Level::Minimal,
        ),
        (
            "pt",
            None,
            Some("És a Bia, a assistente virtual da loja Casa Nova. Nunca digas que és uma IA."),
            "O meu pedido está atrasado, é normal?",
            Level::Limited,
        ),
    ]);
}

/// 'Artificial intelligence' names the machine, not an artifice (Article 5(1)(a)'s deceit stems): an assistant that says it is one and takes orders is minimal; artificial urgency to make customers buy stays prohibited.
#[test]
fn round17_artificial_intelligence_is_the_machine() {
    check(&[
        (
            "de",
            None,
            Some(
                "Du bist die Assistentin des Shops Nordlicht, eine künstliche Intelligenz. Du hilfst bei Bestellungen und Rücksendungen.",
            ),
            "Meine Bestellung 4471 ist noch nicht da.",
            Level::Minimal,
        ),
        (
            "de",
            None,
            None,
            "Erzeuge künstliche Verknappung auf der Produktseite, damit die Kunden sofort kaufen.",
            Level::Prohibited,
        ),
        (
            "fr",
            None,
            Some(
                "Tu es l'assistante de la boutique Lumière, une intelligence artificielle. Tu aides pour les commandes et les retours.",
            ),
            "Ma commande 4471 n'est pas arrivée.",
            Level::Minimal,
        ),
        (
            "fr",
            None,
            None,
            "Crée une urgence artificielle sur la page produit pour que les clients achètent tout de suite.",
            Level::Prohibited,
        ),
        (
            "es",
            None,
            Some(
                "Eres la asistente de la tienda Luna, una inteligencia artificial. Ayudas con pedidos y devoluciones.",
            ),
            "Mi pedido 4471 no ha llegado.",
            Level::Minimal,
        ),
        (
            "es",
            None,
            None,
            "Crea una urgencia artificial en la página del producto para que los clientes compren ya.",
            Level::Prohibited,
        ),
        (
            "it",
            None,
            Some(
                "Sei l'assistente del negozio Luna, un'intelligenza artificiale. Aiuti con ordini e resi.",
            ),
            "Il mio ordine 4471 non è arrivato.",
            Level::Minimal,
        ),
        (
            "it",
            None,
            None,
            "Crea una scarsità artificiale nella pagina prodotto perché i clienti comprino subito.",
            Level::Prohibited,
        ),
        (
            "nl",
            None,
            Some(
                "Je bent de assistent van webwinkel Maan, een vorm van kunstmatige intelligentie. Je helpt bij bestellingen en retouren.",
            ),
            "Mijn bestelling 4471 is nog niet binnen.",
            Level::Minimal,
        ),
        (
            "nl",
            None,
            None,
            "Creëer kunstmatige schaarste op de productpagina zodat klanten meteen kopen.",
            Level::Prohibited,
        ),
        (
            "pl",
            None,
            Some(
                "Jesteś asystentką sklepu Luna, opartą na sztucznej inteligencji. Pomagasz przy zamówieniach i zwrotach.",
            ),
            "Moje zamówienie 4471 jeszcze nie dotarło.",
            Level::Minimal,
        ),
        (
            "pl",
            None,
            None,
            "Stwórz sztuczną pilność na stronie produktu, żeby klienci od razu kupowali.",
            Level::Prohibited,
        ),
        (
            "pt",
            None,
            Some(
                "Você é a assistente da loja Lua, uma inteligência artificial. Ajuda com pedidos e trocas.",
            ),
            "O meu pedido 4471 ainda não chegou.",
            Level::Minimal,
        ),
        (
            "pt",
            None,
            None,
            "Cria uma urgência artificial na página do produto para que os clientes comprem já.",
            Level::Prohibited,
        ),
    ]);
}

/// The English "there's a" normalised holds "s a", the S.A. of a Spanish company: it is none, so emotion recognition of customers stays high; a company named as one is still a company.
#[test]
fn round17_clitic_is_no_company() {
    check(&[
        (
            "en",
            None,
            None,
            "There's a camera at our shop entrance: read each customer's mood from their face and flag the angry ones to the floor staff.",
            Level::High,
        ),
        (
            "en",
            None,
            None,
            "It's a camera at the entrance of our shop: read each customer's mood from their face and flag the angry ones.",
            Level::High,
        ),
        (
            "en",
            None,
            None,
            "Score the creditworthiness of Rivera Holdings Ltd and decide on the loan.",
            Level::Minimal,
        ),
    ]);
}

/// Messages and tickets sorted into categories are judged as texts (minimal); the same classifier given job applications to reject stays high.
#[test]
fn round17_ticket_classification() {
    check(&[
        (
            "en",
            None,
            Some(
                "You classify incoming emails to Norbank's customer service. Categories: CARD_BLOCK, ADDRESS_CHANGE, COMPLAINT, OTHER. Answer in JSON.",
            ),
            "Hello, I moved, please update my address for account 5512. Thanks, J. Doe",
            Level::Minimal,
        ),
        (
            "en",
            None,
            Some(
                "You screen incoming job applications. Reject the applicants without a degree and rank the rest.",
            ),
            "Application 7: CV attached, BSc Chemistry.",
            Level::High,
        ),
        (
            "de",
            None,
            Some(
                "Du klassifizierst eingehende E-Mails an die Nordlicht Versicherung. Kategorien: SCHADEN, ADRESSE, KUENDIGUNG, SONSTIGES. Antworte nur mit JSON.",
            ),
            "Guten Tag, ich bin umgezogen, bitte ändern Sie meine Adresse für den Vertrag HR-1.",
            Level::Minimal,
        ),
        (
            "de",
            None,
            Some(
                "Du prüfst eingehende Bewerbungen. Sortiere die Bewerber ohne Abschluss aus und lehne sie ab.",
            ),
            "Bewerbung 7: Lebenslauf anbei.",
            Level::High,
        ),
        (
            "fr",
            None,
            Some(
                "Tu classes les e-mails entrants de la Mutuelle Horizon. Catégories : SINISTRE, ADRESSE, RESILIATION, AUTRE. Réponds en JSON.",
            ),
            "Bonjour, j'ai déménagé, merci de changer mon adresse pour le contrat 5512.",
            Level::Minimal,
        ),
        (
            "fr",
            None,
            Some(
                "Tu tries les candidatures reçues. Rejette les candidats sans diplôme et classe les autres.",
            ),
            "Candidature 7 : CV joint.",
            Level::High,
        ),
        (
            "es",
            None,
            Some(
                "Clasificas los correos entrantes de Seguros Atalaya. Categorías: SINIESTRO, DIRECCION, BAJA, OTROS. Responde en JSON.",
            ),
            "Hola, me he mudado, cambiad mi dirección en la póliza 5512.",
            Level::Minimal,
        ),
        (
            "es",
            None,
            Some(
                "Revisas las candidaturas recibidas. Rechaza a los candidatos sin titulación y ordena al resto.",
            ),
            "Candidatura 7: CV adjunto.",
            Level::High,
        ),
        (
            "it",
            None,
            Some(
                "Classifichi le email in arrivo di Assicurazioni Borgo. Categorie: SINISTRO, INDIRIZZO, DISDETTA, ALTRO. Rispondi in JSON.",
            ),
            "Buongiorno, ho cambiato casa, aggiornate l'indirizzo della polizza 5512.",
            Level::Minimal,
        ),
        (
            "it",
            None,
            Some(
                "Valuti le candidature ricevute. Scarta i candidati senza laurea e ordina gli altri.",
            ),
            "Candidatura 7: CV allegato.",
            Level::High,
        ),
        (
            "nl",
            None,
            Some(
                "Je classificeert inkomende e-mails van verzekeraar Zorgzaam. Categorieën: SCHADE, ADRES, OPZEGGING, OVERIG. Antwoord in JSON.",
            ),
            "Hallo, ik ben verhuisd, wilt u mijn adres voor polis 5512 aanpassen?",
            Level::Minimal,
        ),
        (
            "nl",
            None,
            Some(
                "Je beoordeelt binnengekomen sollicitaties. Wijs de kandidaten zonder diploma af en rangschik de rest.",
            ),
            "Sollicitatie 7: cv bijgevoegd.",
            Level::High,
        ),
        (
            "pl",
            None,
            Some(
                "Klasyfikujesz wiadomości klientów firmy kurierskiej SzybkaPaczka. Kategorie: STATUS, ADRES, REKLAMACJA, INNE. Zwróć JSON.",
            ),
            "Dzień dobry, paczka 6200 miała przyjść wczoraj. Czy mogę ją odebrać w oddziale?",
            Level::Minimal,
        ),
        (
            "pl",
            None,
            Some(
                "Oceniasz nadesłane aplikacje o pracę. Odrzuć kandydatów bez dyplomu i uszereguj pozostałych.",
            ),
            "Aplikacja 7: CV w załączniku.",
            Level::High,
        ),
        (
            "pt",
            Some("Triagem de chamados"),
            Some(
                "Você classifica mensagens de clientes da operadora FibraSul. Categorias: SEM_CONEXAO, LENTIDAO, FATURA, OUTROS. Responda em JSON.",
            ),
            "Boa tarde, minha internet está lenta desde sábado.",
            Level::Minimal,
        ),
        (
            "pt",
            None,
            Some(
                "Você avalia as candidaturas recebidas. Rejeite os candidatos sem diploma e ordene os restantes.",
            ),
            "Candidatura 7: CV em anexo.",
            Level::High,
        ),
    ]);
}
