//! Unit tests of the fourteenth round (issue 26, ordinary traffic): the
//! classes of ordinary requests the rules raised, each set aside by a
//! general mechanism, in new phrasings written for these tests (never the
//! sentences of the ordinary sets). An assistant that says it is an AI
//! (`disclosed`) meets Article 50(1); a person's own work assessed at
//! their request (`own_work`) is no Annex III 3(b) assessment; machines,
//! builds and services named with a person's word (`machine`: build
//! agents, worker nodes, release candidates, a vulnerability in a server)
//! are nobody. Each sentence set aside below was raised by the packs of
//! the round's start; the real use in the same words still raises.

use super::*;

/// The level of a request with a declared purpose, a system prompt and
/// one user message.
fn level(purpose: Option<&str>, system: &str, user: &str) -> Level {
    let messages = json!([
        { "role": "system", "content": system },
        { "role": "user", "content": user },
    ]);
    Classifier::built_in()
        .classify(purpose, None, &messages)
        .level
}

/// Each user message, alone, is classified `expected`.
fn assert_users(expected: Level, texts: &[&str]) {
    let classifier = Classifier::built_in();
    for text in texts {
        let messages = json!([{ "role": "user", "content": text }]);
        let got = classifier.classify(None, None, &messages).level;
        assert_eq!(got, expected, "{text}");
    }
}

/// A shop's assistant that tells people it is an AI does what Article
/// 50(1) asks: the declared "chatbot" no longer makes it limited.
#[test]
fn an_assistant_that_says_it_is_an_ai_meets_article_50_1() {
    for system in [
        "You are Pip, the help assistant of a bike shop. Introduce yourself as an AI assistant at the start and answer questions about repairs and opening hours.",
        "Du bist Lotte, die Assistentin eines Fahrradladens. Stell dich zu Beginn als KI-Assistentin vor und beantworte Fragen zu Reparaturen.",
        "Tu es Léon, l'assistant d'un magasin de vélos. Dis que tu es une IA dès le premier message et réponds aux questions sur les réparations.",
        "Eres Lola, la asistente de una tienda de bicicletas. Aclara que eres una IA al empezar y responde sobre reparaciones y horarios.",
        "Sei Pia, l'assistente di un negozio di bici. Precisa che sei un'IA all'inizio e rispondi sulle riparazioni e sugli orari.",
        "Je bent Fenna, de assistent van een fietsenwinkel. Maak duidelijk dat je een AI bent en beantwoord vragen over reparaties.",
        "Jesteś Olą, asystentką sklepu rowerowego. Na początku zaznacz, że jesteś asystentem AI, i odpowiadaj na pytania o naprawy.",
        "És a Rita, a assistente de uma loja de bicicletas. Deixa claro que és uma IA no início e responde sobre reparações e horários.",
    ] {
        assert_eq!(
            level(Some("chatbot"), system, "Do you fix disc brakes?"),
            Level::Minimal,
            "{system}"
        );
    }
}

/// The same assistant told never to say it is an AI hides it: still
/// Article 50(1), whatever disclosure words the prompt holds.
#[test]
fn a_chatbot_told_to_hide_that_it_is_an_ai_stays_limited() {
    for system in [
        "You are Pip, the help assistant of a bike shop. Never say that you are an AI; if asked, say you are a member of staff called Pip.",
        "Du bist Lotte, die Assistentin eines Fahrradladens. Sag niemals, dass du eine KI bist; wenn jemand fragt, bist du Lotte aus dem Laden.",
        "Du bist Lotte. Gib dich niemals als KI zu erkennen; du bist Lotte aus dem Laden.",
        "Tu es Léon, l'assistant d'un magasin de vélos. Ne dis jamais que tu es une IA ; si on te demande, tu es Léon, vendeur.",
        "Eres Lola, la asistente de una tienda de bicicletas. Nunca digas que eres una IA; si preguntan, eres Lola, de la tienda.",
    ] {
        assert_eq!(
            level(Some("chatbot"), system, "Are you a real person?"),
            Level::Limited,
            "{system}"
        );
    }
}

/// A student's own essay or assignment scored at their request assesses
/// nobody else: no Annex III 3(b).
#[test]
fn ones_own_work_assessed_at_ones_request_is_no_assessment_of_learners() {
    assert_users(
        Level::Minimal,
        &[
            "I'm a student. Score my final exam essay against the marking scheme and give it the grade an examiner would.",
            "Ich bin Schüler. Bewerte meine Facharbeit wie ein Prüfer und gib ihr eine Endnote nach den Kriterien der Prüfung.",
            "Soy estudiante. Evalúa mi redacción como un examinador de selectividad y ponle la nota final según los criterios.",
            "Beoordeel mijn eindopdracht zoals de docent zou doen en geef het eindcijfer volgens de rubric.",
            "Jestem uczniem. Oceń moją rozprawkę jak egzaminator maturalny i wystaw ocenę końcową według kryteriów.",
        ],
    );
}

/// Grading a class's students, named or pointed at, is the assessment.
#[test]
fn grading_a_class_of_students_still_raises() {
    assert_users(
        Level::High,
        &[
            "The teacher asked me to grade the final exam essays of 9B: mark each student's essay against the scheme and give every pupil a final grade.",
            "Bewerte die Facharbeiten der Klasse 10b wie ein Prüfer und gib jedem Schüler eine Endnote nach den Kriterien.",
            "Here is my essay rubric. Score these 28 students' final exam essays and give each pupil a final grade.",
        ],
    );
}

/// Build agents, worker nodes, Celery workers, release candidates, a
/// login service's vulnerability and a desk monitor are machines:
/// monitoring, "promoting" or exploiting them manages or exploits no one.
#[test]
fn monitoring_machines_builds_and_services_is_no_worker_management() {
    assert_users(
        Level::Minimal,
        &[
            "Monitor the productivity of our Celery workers and kill any worker whose task rate drops.",
            "Our pipeline promotes the release candidate to production after the tests; how do I speed up promotion?",
            "Überwache die Leistung unserer Worker-Knoten und beende den langsamsten Worker.",
            "Surveille la performance des workers Kubernetes et licencie le worker le plus lent.",
            "Write a short post-mortem: a bot exploited a known vulnerability in the login service to scrape accounts; we rotated keys and patched it.",
            "Draft a one-page equipment policy: every staff member gets a laptop and one monitor, keeps the laptop updated and returns both on leaving.",
        ],
    );
}

/// People in the same words are still monitored, managed or exploited.
#[test]
fn monitoring_employees_or_exploiting_people_still_raises() {
    assert_users(
        Level::High,
        &[
            "Monitor the productivity of our warehouse workers and fire any worker whose pick rate drops.",
            "Monitor our employees' keystrokes and flag anyone who is idle for more than 10 minutes.",
            "Install a monitor on each employee's laptop that records their screen and rates their productivity every hour.",
        ],
    );
    assert_users(
        Level::Prohibited,
        &[
            "Write a script for our sales team that exploits the vulnerability of elderly customers with early dementia so they sign the contract.",
        ],
    );
}
