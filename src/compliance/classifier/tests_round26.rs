//! Unit tests of the twenty-sixth round (issue 26), each written here as
//! probes of their own (none is a sentence of a set): a deployer's prompt
//! no longer pairs a domain named in one paragraph with an act in another,
//! acts joined by "or", "and", "ni" share the negation before the first of
//! them, and the n-gram layer raises a request whose match a framing set
//! aside when it is surer than usual and moves a high result to
//! prohibited when its `prohibited` model is sure (its own tests are in
//! `ngram_tests.rs`); a user who sets up a system that talks to the public
//! ("a voicebot that answers patients' calls") is within Article 50(1),
//! media asked to pass as real are a deep fake of Article 50(4), and so is
//! text on a topic of public interest published with no one reading it.

use super::tests_round17::check_exact;
use super::*;

/// An internal assistant's policy notes name staff and a loan; its answer
/// rules ask it to rate its own confidence. Until this round the
/// instructions paired with themselves at any distance and read worker
/// management.
#[test]
fn round26_a_prompts_paragraphs_do_not_pair_with_each_other() {
    check_exact(&[
        (
            "en",
            None,
            Some(
                "You are Ledgerly, the internal knowledge assistant of the finance back office at Corvane Ltd. Colleagues ask you about our expense and travel policies.\n\nPolicy notes:\n- Season ticket loans are repaid through payroll over ten months.\n- Hotel nights in London are capped at 180 pounds.\n\nWhen you answer, rate how confident you are from 1 to 5 and cite the policy line.",
            ),
            "Can I book a hotel at 210 pounds for a client dinner night?",
            Level::Minimal,
        ),
        (
            "es",
            None,
            Some(
                "Eres el asistente interno de la oficina de viajes de Grupo Tavira. Te consultan solo los empleados.\n\nNotas:\n- Los anticipos de nómina se devuelven en diez meses.\n- Las noches de hotel en Madrid tienen un tope de 150 euros.\n\nAl responder, puntúa tu confianza de 1 a 5 y cita la norma.",
            ),
            "¿Puedo reservar un hotel de 170 euros para una cena con un cliente?",
            Level::Minimal,
        ),
        // The domain in the instructions, the act in the user's turn: still
        // one use.
        (
            "en",
            None,
            Some(
                "You are the assistant of the admissions committee of the Master's programme in Data Science.",
            ),
            "Give each of these five applicants' files a mark out of 20 and rank them.",
            Level::High,
        ),
    ]);
}

/// "Do not mark or grade": the second act shares the first's negation, in
/// each language's words for "or", "and", "nor"; an act of the rule must
/// stand right before the joining word, so "do not call him and reject
/// his application" still rejects.
#[test]
fn round26_joined_acts_share_a_negation() {
    check_exact(&[
        (
            "en",
            None,
            Some(
                "You are Lessonsmith, a planning assistant for teachers. You do not mark or grade pupils' work.",
            ),
            "Plan a 60-minute lesson on persuasive writing for Year 9.",
            Level::Minimal,
        ),
        (
            "en",
            None,
            Some(
                "You are the recruiting team's writing assistant. You never screen, rank or reject applicants.",
            ),
            "Draft a job ad for a warehouse team lead in Leeds.",
            Level::Minimal,
        ),
        (
            "fr",
            None,
            Some(
                "Tu es l'assistant de préparation des enseignants. Tu ne dois pas noter ou évaluer les copies des élèves.",
            ),
            "Prépare une séance sur le discours argumentatif en 4e.",
            Level::Minimal,
        ),
        (
            "es",
            None,
            Some(
                "Eres el asistente de redacción de Recursos Humanos. No debes descartar ni rechazar a los candidatos.",
            ),
            "Redacta una oferta de empleo para un jefe de equipo de almacén en Zaragoza.",
            Level::Minimal,
        ),
        (
            "it",
            None,
            Some(
                "Sei l'assistente di scrittura dell'ufficio del personale. Non devi scartare o rifiutare i candidati.",
            ),
            "Scrivi un annuncio di lavoro per un capoturno di magazzino a Verona.",
            Level::Minimal,
        ),
        (
            "pt",
            None,
            Some(
                "És o assistente de redação dos recursos humanos. Não deves excluir ou rejeitar candidatos.",
            ),
            "Escreve um anúncio de emprego para um chefe de equipa de armazém em Braga.",
            Level::Minimal,
        ),
        (
            "en",
            None,
            Some("You are the HR assistant of Fernway Logistics."),
            "Do not call him and reject his application: Tom Berg, warehouse applicant.",
            Level::High,
        ),
    ]);
}

/// "The vendor sends us..." frames the sentence as about a company, so the
/// rules set the emotion-recognition match aside; the n-gram model reads
/// pupils' faces watched for boredom during lessons at p(risky) above the
/// framed threshold and raises it (an Article 5(1)(f) practice).
#[test]
fn round26_a_framed_practice_the_model_is_sure_of_is_raised() {
    check_exact(&[(
        "en",
        None,
        None,
        "The vendor sends us every pupil's webcam stream during lessons; mark which children look bored or upset so teachers can report them to their parents.",
        Level::Prohibited,
    )]);
}

/// Faces taken from three months of a station's recordings into a
/// recognition gallery, "everyone, not only suspects": the rules read
/// remote biometric identification (high); it is the untargeted scraping
/// of Article 5(1)(e), and the n-gram model's `prohibited` reads it so
/// (p above the `escalate` threshold).
#[test]
fn round26_a_high_result_the_model_reads_as_a_practice_is_prohibited() {
    check_exact(&[(
        "en",
        None,
        None,
        "Take every face you can find in the last three months of recordings from the 40 cameras at the South station, make embeddings and add them to our recognition gallery. Everyone, not only suspects: the bigger the database, the better the hit rate later.",
        Level::Prohibited,
    )]);
}

/// A conversational system the user's turn sets up to talk to the public:
/// a `bot` term, what it does with people (`talk`) and an audience in one
/// sentence, in seven languages. Talk about the topic, a system for staff
/// and software built around one are not.
#[test]
fn round26_a_system_set_up_to_talk_to_the_public_is_limited() {
    check_exact(&[
        (
            "en",
            None,
            None,
            "Our clinic wants a voicebot that answers patients' calls around the clock and books appointments. Write the greeting and the call flow.",
            Level::Limited,
        ),
        (
            "de",
            None,
            None,
            "Wir wollen einen Sprachbot, der alle Anrufe unserer Kunden annimmt und Termine vergibt. Schreib die Begrüßung.",
            Level::Limited,
        ),
        (
            "fr",
            None,
            None,
            "On voudrait qu'un agent vocal réponde à tous les appels entrants des clients et propose des créneaux. Écris le script.",
            Level::Limited,
        ),
        (
            "es",
            None,
            None,
            "Queremos un asistente de voz que atienda todas las llamadas de los clientes y les dé cita. Escribe el guion.",
            Level::Limited,
        ),
        (
            "it",
            None,
            None,
            "Vogliamo un assistente vocale che risponda a tutte le chiamate dei clienti e fissi gli appuntamenti. Scrivi il copione.",
            Level::Limited,
        ),
        (
            "nl",
            None,
            None,
            "Wij willen een voicebot die alle telefoontjes van klanten beantwoordt. Schrijf de begroeting.",
            Level::Limited,
        ),
        (
            "pl",
            None,
            None,
            "Chcemy, żeby voicebot odbierał wszystkie połączenia od pacjentów i umawiał wizyty. Napisz powitanie.",
            Level::Limited,
        ),
        (
            "en",
            None,
            None,
            "Explain what a voicebot is and how it answers customers' calls.",
            Level::Minimal,
        ),
        (
            "en",
            None,
            None,
            "We want a chatbot that answers our staff's questions about the leave policy. Write the welcome message.",
            Level::Minimal,
        ),
        (
            "de",
            None,
            None,
            "Wir wollen einen Chatbot, der die Fragen unserer Beschäftigten zur Reisekostenordnung beantwortet. Schreib die Begrüßung.",
            Level::Minimal,
        ),
        (
            "en",
            None,
            None,
            "Write a Python webhook for our chatbot that answers customers on WhatsApp; add unit tests.",
            Level::Minimal,
        ),
    ]);
}

/// A photo, a video or a voice asked to pass as real ("so it looks real",
/// "so als hätte es ein Passant geschossen", "jakby z telefonu świadka")
/// is Article 50(4) whoever or whatever it shows: a real building on fire
/// made to look like a passer-by's photo. Asking how to tell a generated
/// photo, or a cartoon, is not.
#[test]
fn round26_media_asked_to_pass_as_real_are_a_deep_fake() {
    check_exact(&[
        (
            "en",
            None,
            None,
            "Make a picture of Cologne Cathedral on fire at night, phone quality, slightly shaky, so it looks real. It goes on our feed tonight.",
            Level::Limited,
        ),
        (
            "de",
            None,
            None,
            "Für die Kampagne brauchen wir ein Bild vom Kölner Dom, wie er nachts brennt, leicht verwackelt, so als hätte es ein Passant gerade geschossen.",
            Level::Limited,
        ),
        (
            "pl",
            None,
            None,
            "Zrób mi zdjęcie Pałacu Kultury w płomieniach, jakby z telefonu świadka, noc, dym, ludzie z telefonami.",
            Level::Limited,
        ),
        (
            "en",
            None,
            None,
            "How can I tell whether a photo looks real or was generated?",
            Level::Minimal,
        ),
        (
            "en",
            None,
            None,
            "Make a cartoon image of our team as superheroes, so it looks real.",
            Level::Minimal,
        ),
    ]);
}

/// Text on a topic of public interest (a strike, a water outage) to be
/// published with no one reading it first: Article 50(4), whose duty
/// falls away only under human review. Product texts that go live
/// unchecked, and an editor who reads each piece, are not. The product
/// texts are the rules' near-miss: since the twenty-seventh round the
/// n-gram layer's `limited` model raises them (p 0.92, over its 0.8), a
/// false raise that round counts (docs/compliance.md), so for them the
/// rules' level is what is held here.
#[test]
fn round26_public_interest_text_published_unread_is_limited() {
    let product = "Our shop's product descriptions go live on the website and nobody checks them; make them livelier.";
    let c = Classifier::built_in().classify(
        None,
        None,
        &serde_json::json!([{"role": "user", "content": product}]),
    );
    assert_eq!(super::tests::rules_level(&c), Level::Minimal, "{c:?}");
    check_exact(&[
        (
            "en",
            None,
            None,
            "Each time the rail union announces a strike, write a short explainer for our local news website; it goes live straight away and nobody reads it first.",
            Level::Limited,
        ),
        (
            "pl",
            None,
            None,
            "Z każdego maila wodociągów o przerwie w dostawie wody rób komunikat na stronę gminy, bez tego, że ktoś z urzędu to czyta.",
            Level::Limited,
        ),
        (
            "fr",
            None,
            None,
            "Dès qu'un arrêté de restriction d'eau paraît, rédige l'article et publie-le sur le site ; personne ne le relit avant.",
            Level::Limited,
        ),
        (
            "en",
            None,
            None,
            "Each time the rail union announces a strike, write a short explainer for our website; our editor reads it before it goes live.",
            Level::Minimal,
        ),
    ]);
}
