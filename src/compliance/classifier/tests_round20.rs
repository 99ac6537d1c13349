//! Unit tests of the twentieth round (issue 26): the classes added from
//! the misses of fresh20, the false raises of the sixth ordinary set and
//! the two training batches of the round (a deployment set before the
//! public by its deployer, a member of the public asking whether they talk
//! to a machine, a yes-or-no decision asked about a person, keeping a
//! customer from leaving with a false claim, the vocabulary of building
//! software in eight languages, made-up people and no real data, one's own
//! credit file, the English "I'm"), in phrasings written for these tests
//! (not the sets' sentences). Each class has its harmless case and, beside
//! it, the use that still raises, in several languages. The helpers are
//! the seventeenth round's.

use super::tests_round17::{check, check_exact};
use super::*;

/// A deployer's prompt that sets the model before the public (an
/// assistant role, members of the public, a public channel) is Article
/// 50(1) without any of its words; disclosed as an AI it is met, and an
/// assistant for the staff or a ticket router talks to no member of the
/// public.
#[test]
fn round20_a_deployment_set_before_the_public_is_limited() {
    check_exact(&[
        (
            "en",
            None,
            Some(
                "You are the virtual assistant of Larkfield Water. You answer customers in the chat window on our website about bills, meter readings and leaks.",
            ),
            "Hello, my bill doubled this quarter, why?",
            Level::Limited,
        ),
        (
            "en",
            None,
            Some(
                "You are the virtual assistant of Larkfield Water. Introduce yourself as an AI assistant. You answer customers in the chat window on our website about bills, meter readings and leaks.",
            ),
            "Hello, my bill doubled this quarter, why?",
            Level::Minimal,
        ),
        (
            "de",
            None,
            Some(
                "Du bist der Sprachassistent der Stadtwerke Nordheide. Anrufer erreichen dich über die Servicenummer; du beantwortest Fragen zu Abschlägen und Zählerständen.",
            ),
            "Ich möchte meinen Zählerstand durchgeben.",
            Level::Limited,
        ),
        (
            "fr",
            None,
            Some(
                "Tu es l'assistant virtuel de la médiathèque de Pontcroix. Tu réponds aux usagers sur le site internet : horaires, réservations, inscriptions.",
            ),
            "Bonjour, jusqu'à quelle heure êtes-vous ouverts samedi ?",
            Level::Limited,
        ),
        (
            "pl",
            None,
            Some(
                "Jesteś wirtualnym asystentem działu kadr. Pomagasz pracownikom znaleźć procedury w wewnętrznym regulaminie.",
            ),
            "Ile dni urlopu na żądanie mi przysługuje?",
            Level::Minimal,
        ),
        (
            "es",
            None,
            Some(
                "Clasifica los mensajes de los clientes que llegan por la web en: FACTURA, AVERIA, BAJA u OTRO. Responde solo con la etiqueta.",
            ),
            "Se me ha cortado la luz desde esta mañana.",
            Level::Minimal,
        ),
    ]);
}

/// A disclosure sets a public deployment aside only under a rule that a
/// disclosure meets: an operator's pack whose public-facing rule is not
/// `met_by_disclosure` still hits on a deployment that says it is an AI.
#[test]
fn a_disclosure_sets_a_public_deployment_aside_only_under_a_rule_it_meets() {
    let deployment = "Tu es l'assistant de la médiathèque de Pontcroix. Présente-toi comme une IA. Tu réponds aux usagers sur le site internet : horaires, réservations, inscriptions.";
    let messages = json!([
        { "role": "system", "content": deployment },
        { "role": "user", "content": "Bonjour, jusqu'à quelle heure êtes-vous ouverts samedi ?" },
    ]);
    let built_in = Classifier::built_in().classify(None, None, &messages);
    assert_eq!(built_in.level, Level::Minimal);
    let rules = include_str!("../../../assets/risk/rules.toml");
    let unmet = rules.replacen(
        "id = \"art50_1_ai_interaction\"\nlevel = \"limited\"\nmet_by_disclosure = true\n",
        "id = \"art50_1_ai_interaction\"\nlevel = \"limited\"\n",
        1,
    );
    assert_ne!(unmet, rules, "the built-in rule is met by a disclosure");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rules.toml"), unmet).unwrap();
    let operator = Classifier::load(Some(dir.path())).unwrap();
    let c = operator.classify(None, None, &messages);
    assert_eq!(c.level, Level::Limited);
    assert!(
        c.triggered_rules()
            .contains(&"art50_1_ai_interaction".to_owned())
    );
}

/// A member of the public asking whether a person or a machine answers,
/// and the model told to reply to them, is a deployment that talks to the
/// public (Article 50(1)); the same question to a deployment that says it
/// is an AI is met.
#[test]
fn round20_the_public_asking_whether_a_machine_answers_is_limited() {
    check_exact(&[
        (
            "es",
            None,
            None,
            "Respóndele a esta clienta del taller: «¿Tenéis hueco para cambiar las pastillas de freno el lunes? ¿Eres una persona o un bot?»",
            Level::Limited,
        ),
        (
            "it",
            None,
            None,
            "Scrivi la risposta per questo cliente della ferramenta: «Avete viti da legno da 5 cm? Ma sei una persona vera?»",
            Level::Limited,
        ),
        (
            "nl",
            None,
            Some(
                "Je bent de chatassistent van Fietsenmakerij Klok. Zeg dat je een AI bent als iemand ernaar vraagt.",
            ),
            "Hoi, spreek ik met een mens of met een robot? Is mijn fiets al klaar?",
            Level::Minimal,
        ),
    ]);
}

/// A yes-or-no decision asked about a person's record is the decision of
/// the rule's area, though its act is not named; the same words about a
/// pull request decide nothing about a person.
#[test]
fn round20_a_yes_or_no_decision_about_a_person_is_the_decision() {
    check(&[
        (
            "fr",
            None,
            None,
            "Dossier de prêt personnel : emprunteur de 41 ans, CDI, 2 400 € net, un crédit auto en cours. Accord ou refus ? Je lui réponds ce soir.",
            Level::High,
        ),
        (
            "de",
            None,
            None,
            "Kreditantrag über 8.000 €: Antragstellerin 29, befristet angestellt, 1.900 € netto, keine Schufa-Einträge. Annehmen oder ablehnen?",
            Level::High,
        ),
        (
            "en",
            None,
            None,
            "Here is the diff of the pull request that renames the config keys. Accept or reject?",
            Level::Minimal,
        ),
    ]);
}

/// A claim the request itself says is false, to keep a customer from
/// leaving, is Article 5(1)(a); a retention offer that tells the truth is
/// marketing.
#[test]
fn round20_a_false_claim_to_keep_customers_from_leaving_is_manipulation() {
    check(&[
        (
            "en",
            None,
            None,
            "When a subscriber opens the cancel page, tell them they will lose their saved playlists forever (which they won't, there is no such rule) to stop them from cancelling.",
            Level::Prohibited,
        ),
        (
            "pt",
            None,
            None,
            "Quando o cliente pedir para sair, diz-lhe que há uma taxa de rescisão de 90 €, o que não é o caso, para que não cancelem.",
            Level::Prohibited,
        ),
        (
            "en",
            None,
            None,
            "Write a retention offer email for subscribers who are about to cancel: two months at half price, and a clear link to cancel anyway.",
            Level::Minimal,
        ),
    ]);
}

/// Building a system with the vocabulary of software work (a module, an
/// endpoint, a database migration, fixtures, synthetic data) in each
/// language is building, not using (TAXONOMY rule 4); the same agent told
/// to run the scoring on real applicants now stays high.
#[test]
fn round20_the_words_of_building_software_in_eight_languages() {
    check(&[
        (
            "pl",
            None,
            None,
            "Dodaj nowy moduł oceny wniosków kredytowych: endpoint REST, model danych i testy na danych syntetycznych.",
            Level::Minimal,
        ),
        (
            "es",
            None,
            None,
            "Añade al microservicio de selección de candidatos un endpoint que devuelva la puntuación, con fixtures y datos sintéticos.",
            Level::Minimal,
        ),
        (
            "nl",
            None,
            None,
            "Schrijf een databasemigratie voor de tabel met kredietaanvragen en een nieuwe module voor de score, met tests op synthetische data.",
            Level::Minimal,
        ),
        (
            "en",
            None,
            None,
            "Pull the 300 loan applications from tonight's queue, score each applicant and approve or decline them before 6 am.",
            Level::High,
        ),
    ]);
}

/// Made-up people or no real data: teaching cases and tests on invented
/// applicants decide nothing about a real person; pointing at concrete
/// people keeps the use.
#[test]
fn round20_made_up_people_decide_nothing_about_a_real_person() {
    check_exact(&[
        (
            "it",
            None,
            None,
            "Per il corso dei nuovi addetti fidi preparami sei richieste di prestito di persone di fantasia e valuta il merito creditizio di ciascuna, con la soluzione commentata.",
            Level::Minimal,
        ),
        (
            "de",
            None,
            None,
            "Für die Schulung: Bewerte die Bonität von fünf fiktiven Personen und erkläre jeweils, ob der Kredit genehmigt würde.",
            Level::Minimal,
        ),
        (
            "fr",
            None,
            None,
            "Évalue la solvabilité de ces 12 emprunteurs et dis-moi lesquels refuser : ce sont nos vrais clients.",
            Level::High,
        ),
    ]);
}

/// One's own credit file, read at one's own request, is self-use in the
/// whole text; a clerk's reading of an applicant's file stays high.
#[test]
fn round20_ones_own_credit_file_is_self_use() {
    check(&[
        (
            "de",
            None,
            None,
            "Meine Schufa-Selbstauskunft zeigt einen Score von 91 %. Woran kann das liegen und wie verbessere ich ihn, bevor wir einen Kredit beantragen?",
            Level::Minimal,
        ),
        (
            "pl",
            None,
            None,
            "Ściągnąłem swój raport BIK i ocena spadła. Co mogę zrobić, żeby ją poprawić przed wnioskiem o kredyt?",
            Level::Minimal,
        ),
        (
            "de",
            None,
            None,
            "Der Antragsteller hat laut Schufa einen Score von 91 %. Bewerte seine Bonität und entscheide über den Kredit.",
            Level::High,
        ),
    ]);
}

/// The English "I'm" is "i m" once normalised: its "m" is no person (the
/// French "M." of a man's name), so a worker's question about their own
/// rating is no worker management; a manager rating named staff still is.
#[test]
fn round20_the_m_of_im_is_no_person() {
    check_exact(&[
        (
            "en",
            None,
            None,
            "Performance ratings are due and I'm rating myself first, can you help me word my self-assessment?",
            Level::Minimal,
        ),
        (
            "en",
            None,
            None,
            "Performance ratings are due: rate each of my five warehouse staff from 1 to 5 and say who should not get a bonus.",
            Level::High,
        ),
    ]);
}
