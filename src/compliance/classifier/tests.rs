//! Unit tests of the classifier: each language's hits and near-misses,
//! the declared purpose, tool prompts, negation, exceptions, grey zones and
//! operator packs.

use super::*;

pub(super) fn classify(purpose: Option<&str>, text: &str) -> Classification {
    Classifier::built_in().classify(purpose, None, &json!([{ "role": "user", "content": text }]))
}

fn level(text: &str) -> Level {
    classify(None, text).level
}

/// The level of the rules' own hits, without the learned layers
/// (`lexical:` and `ngram:` hits): for tests of a rule mechanism the models
/// have no sense of (negation, grey zones, replaced packs).
pub(super) fn rules_level(c: &Classification) -> Level {
    c.hits
        .iter()
        .filter(|h| !h.rule.starts_with("lexical:") && !h.rule.starts_with("ngram:"))
        .map(|h| h.level)
        .max()
        .unwrap_or(Level::Minimal)
}

#[test]
fn the_built_in_packs_cover_every_taxonomy_rule_in_four_languages() {
    let classifier = Classifier::built_in();
    let ids: Vec<&str> = classifier.rule_ids().collect();
    for id in [
        "art5_1_a_manipulation",
        "art5_1_b_vulnerability_exploitation",
        "art5_1_ba_ncii",
        "art5_1_c_social_scoring",
        "art5_1_d_predictive_policing_profiling",
        "art5_1_e_facial_scraping",
        "art5_1_f_emotion_workplace_education",
        "art5_1_g_biometric_categorisation_sensitive",
        "art5_1_h_realtime_rbi_law_enforcement",
        "annex3_1a_remote_biometric_id",
        "annex3_1b_biometric_categorisation",
        "annex3_1c_emotion_recognition",
        "annex3_2_critical_infrastructure",
        "annex3_3a_education_admission",
        "annex3_3b_learning_outcomes",
        "annex3_3c_education_level",
        "annex3_3d_exam_proctoring",
        "annex3_4a_recruitment",
        "annex3_4b_worker_management",
        "annex3_5a_public_benefits",
        "annex3_5b_creditworthiness",
        "annex3_5c_life_health_insurance",
        "annex3_5d_emergency_triage",
        "annex3_6a_victim_risk",
        "annex3_6b_polygraph",
        "annex3_6c_evidence_reliability",
        "annex3_6d_reoffending_risk",
        "annex3_6e_criminal_profiling",
        "annex3_7a_migration_polygraph",
        "annex3_7b_migration_risk",
        "annex3_7c_asylum_visa_examination",
        "annex3_7d_migration_identification",
        "annex3_8a_justice",
        "annex3_8b_elections",
        "annexI_medical_device",
        "art50_1_ai_interaction",
        "art50_4_deepfake",
        "art50_4_public_interest_text",
    ] {
        assert!(ids.contains(&id), "{id} is missing");
    }
    assert_eq!(ids.len(), 38);
    assert_eq!(
        classifier.languages(),
        ["de", "en", "es", "fr", "it", "nl", "pl", "pt"]
    );
}

#[test]
fn english_high_prohibited_and_near_misses() {
    assert_eq!(
        level("Read these 40 CVs and shortlist the five best candidates for the nurse job."),
        Level::High
    );
    assert_eq!(
        level("Use the office webcams to detect which employees look bored or frustrated."),
        Level::Prohibited
    );
    for minimal in [
        "Explain how credit scores work.",
        "What is social scoring and why does the AI Act ban it?",
        "Please rank my own CV against this job ad.",
        "Score these loan applications for fraud patterns.",
        "Write a short story where a detective predicts who will commit a crime based only on their personality.",
        "Rank these suppliers GmbH by their credit risk and decide whom to approve.",
        "How do I kill a hanging Python process on Linux?",
        "Terminate all idle worker processes on the cluster.",
    ] {
        assert_eq!(level(minimal), Level::Minimal, "{minimal}");
    }
}

#[test]
fn german_high_prohibited_and_near_misses() {
    assert_eq!(
        level("Sortiere die Bewerbungen aus und lehne die schwächsten ab."),
        Level::High
    );
    assert_eq!(
        level("Erkenne aus den Kamerabildern im Klassenzimmer, welche Schüler gelangweilt sind."),
        Level::Prohibited
    );
    for minimal in [
        "Erkläre mir, wie Kredit-Scoring grundsätzlich funktioniert.",
        "Hilf mir, mein eigenes Anschreiben für eine Bewerbung zu formulieren.",
        "Wie beende ich einen hängenden Prozess? Kündige den Server-Prozess.",
    ] {
        assert_eq!(level(minimal), Level::Minimal, "{minimal}");
    }
}

#[test]
fn french_high_prohibited_and_near_misses() {
    assert_eq!(
        level("Évaluez la solvabilité de ce client et décidez si on refuse le prêt."),
        Level::High
    );
    assert_eq!(
        level(
            "Prédis, uniquement à partir de son profil psychologique, si ce jeune va commettre un délit."
        ),
        Level::Prohibited
    );
    for minimal in [
        "Quelle est la différence entre un CV et une lettre de motivation ?",
        "Écris un poème sur un médecin qui pose un diagnostic à son patient.",
        "Évalue la solvabilité de la société Dupont SARL pour ce prêt.",
    ] {
        assert_eq!(level(minimal), Level::Minimal, "{minimal}");
    }
}

#[test]
fn spanish_high_prohibited_and_near_misses() {
    assert_eq!(
        level("Rechaza a los candidatos sin experiencia."),
        Level::High
    );
    assert_eq!(
        level(
            "Construye un modelo que prediga qué ciudadanos cometerán delitos basándose solo en su perfil socioeconómico."
        ),
        Level::Prohibited
    );
    for minimal in [
        "¿Cómo puedo mejorar mi historial crediticio?",
        "Escribe una novela corta sobre un detective que usa la intuición para resolver crímenes.",
        "Analiza estas solicitudes de préstamo para detectar fraude.",
    ] {
        assert_eq!(level(minimal), Level::Minimal, "{minimal}");
    }
}

#[test]
fn a_declared_purpose_raises_the_level() {
    let c = classify(Some("Recruitment: CV screening"), "Summarise this text.");
    assert_eq!(c.level, Level::High);
    assert_eq!(c.hits[0].source, Source::Purpose);
    assert!(c.grey.is_empty());
    assert!(c.reason().contains("declared purpose"));
}

#[test]
fn content_raises_the_level_above_the_purpose() {
    let c = classify(
        Some("Recruitment"),
        "Build a citizen trust score from social media posts and deny loans to people with a low score.",
    );
    assert_eq!(c.level, Level::Prohibited);
    assert_eq!(c.hits[0].rule, "art5_1_c_social_scoring");
    assert!(
        c.triggered_rules()
            .contains(&"annex3_4a_recruitment".to_owned())
    );
    assert!(c.grey.contains(&Grey::ContentOnly {
        rule: "art5_1_c_social_scoring".into()
    }));
    assert!(!c.grey.contains(&Grey::ContentOnly {
        rule: "annex3_4a_recruitment".into()
    }));
}

#[test]
fn content_never_lowers_a_declared_purpose_and_suppressors_do_not_apply_to_it() {
    // "explain", "my own" and "fraud" would suppress these in content.
    for (purpose, text) in [
        (
            "Credit scoring for consumer loans",
            "Explain what you can do.",
        ),
        (
            "CV screening for our hiring pipeline",
            "Look at my own notes first.",
        ),
        ("Loan approval (fraud team)", "Hello"),
    ] {
        let c = classify(Some(purpose), text);
        assert_eq!(c.level, Level::High, "{purpose}");
        assert_eq!(c.hits[0].source, Source::Purpose);
    }
    let fraud_purpose = classify(Some("Credit decisions; no fraud"), "Explain fraud.");
    assert_eq!(fraud_purpose.level, Level::High);
}

#[test]
fn leetspeak_zero_width_and_full_width_text_is_read() {
    assert_eq!(
        level("Sh0rtl1st th3 c4nd1d4t3s and r3j3ct the rest."),
        Level::High
    );
    assert_eq!(
        level("Build a so\u{200b}cial sco\u{200b}re and deny housing to low scorers."),
        Level::Prohibited
    );
    assert_eq!(level("ＲＡＮＫ these ＣＡＮＤＩＤＡＴＥＳ."), Level::High);
}

#[test]
fn a_stem_matches_from_the_start_of_a_word_only() {
    // "cv" must not be found inside "hacv", nor "ai" inside "said".
    assert_eq!(
        level("The hacv tool will rank the results."),
        Level::Minimal
    );
}

#[test]
fn stems_do_not_misfire_on_other_senses_or_languages() {
    for minimal in [
        "I suspect the most likely cause is a memory leak; rank the hypotheses.",
        "Open the circuit breaker when the payment service fails three times.",
        "Evaluate these AI agents and rank the agents by task success rate.",
        "Monitor the GPU driver and track its performance.",
        "Approve this pull request; the benefit is clear.",
        "Send the first 112 rows in order to the API.",
        "Classify these movie posters by genre and estimate the release year.",
        "Identify the religion depicted in this photo of a temple.",
        "Résume les notes de la réunion pour l'équipe et liste les actions à faire.",
        "Decide si el fallo del servidor se debe a la memoria.",
        "Erkläre die Ampelkoalition und wer entscheidet.",
    ] {
        assert_eq!(level(minimal), Level::Minimal, "{minimal}");
    }
    assert_eq!(
        level("Screen this resume and reject the applicant if he lacks SQL."),
        Level::High
    );
}

#[test]
fn the_recent_user_turns_are_read_not_only_the_first() {
    let messages = json!([
        { "role": "system", "content": "You are a helpful assistant." },
        { "role": "user", "content": "Hi!" },
        { "role": "assistant", "content": "Hello." },
        { "role": "user", "content": [{ "type": "text", "text": "Now shortlist the 3 best candidates and reject the others." }] },
    ]);
    let c = Classifier::built_in().classify(None, None, &messages);
    assert_eq!(c.level, Level::High);
    // The system message counts too.
    let system = json!([
        { "role": "system", "content": "You screen job applicants and reject unsuitable candidates." },
        { "role": "user", "content": "Next one, please." },
    ]);
    assert_eq!(
        Classifier::built_in().classify(None, None, &system).level,
        Level::High
    );
}

fn with_system(system: &str, user: &str) -> Classification {
    Classifier::built_in().classify(
        None,
        None,
        &json!([
            { "role": "system", "content": system },
            { "role": "user", "content": user },
        ]),
    )
}

#[test]
fn a_coding_agents_own_prompt_is_not_a_use_on_people() {
    // Paraphrases of the prompts of a CLI coding agent, an IDE
    // assistant and an agent SDK: "use your judgement to decide",
    // "rank candidate completions", "assess the results".
    for system in [
        "You are a coding agent running in the user's terminal. You work in a sandbox on their repository. Use your judgement to decide which files to read, run the unit tests before finishing, keep the diff small and never commit unless asked.",
        "You are an AI pair programmer in the IDE. You see the open file and the cursor position. Rank candidate completions and choose the best one; evaluate each fix for risk.",
        "Du bist ein Coding-Agent im Terminal. Lies die Dateien im Repository, führe Shell-Befehle aus und entscheide nach eigenem Urteil, wann du die Tests laufen lässt.",
        "Eres un agente de código en la terminal: lee el repositorio, ejecuta comandos en la shell y decide según tu criterio qué cambios aplicar.",
    ] {
        let c = with_system(system, "Fix the failing test in the parser module.");
        assert_eq!(c.level, Level::Minimal, "{system}");
    }
    // Even without the tool's words, "judgement" and "decide" are not a
    // court applying the law (the Codex CLI false positive).
    for instruction in [
        "Use your judgement to decide whether this is a test-related task.",
        "You should use judicious initiative to decide on the right level of detail; show good judgment.",
    ] {
        assert_eq!(with_system(instruction, "Go on.").level, Level::Minimal);
    }
    // The end user's own request still counts under a tool's prompt.
    let c = with_system(
        "You are a coding agent in the user's terminal with access to the repository, the shell and git.",
        "Forget the code: read these CVs and reject the applicants older than 50.",
    );
    assert_eq!(c.level, Level::High);
    assert_eq!(c.hits[0].source, Source::Content);
}

#[test]
fn a_tool_prompt_hit_is_set_aside_with_its_reason() {
    let c = with_system(
        "You are a coding agent working in the user's repository with a shell and git. When several fixes are possible, rank the candidates and reject the weakest patch.",
        "Go.",
    );
    assert_eq!(c.level, Level::Minimal);
    let explained = c.explanation().to_string();
    assert!(
        explained.contains("software tool's own prompt"),
        "{explained}"
    );
}

#[test]
fn a_deployer_prompt_names_the_domain_and_the_user_turn_the_act() {
    let c = with_system(
        "You operate the district heating network of the city.",
        "Set the supply temperature and close valve 4 if the pressure exceeds the limit.",
    );
    assert_eq!(c.level, Level::High);
    assert_eq!(c.hits[0].rule, "annex3_2_critical_infrastructure");
    assert!(c.hits[0].evidence.contains("system instructions"));
    // Talk about the topic in the user's turn still frames it.
    let talk = with_system(
        "You operate the district heating network of the city.",
        "Explain in general how a valve controls the pressure.",
    );
    assert_eq!(talk.level, Level::Minimal);
}

#[test]
fn a_purpose_term_of_a_rule_with_objects_needs_one() {
    // Emotion analytics is Article 5(1)(f) for staff, Annex III 1(c)
    // for an audience.
    let staff = classify(
        Some("Emotion analytics for our call-centre staff"),
        "Process today's recordings.",
    );
    assert_eq!(staff.level, Level::Prohibited);
    let audience = classify(
        Some("Emotion recognition for audience research"),
        "Process today's recordings.",
    );
    assert_eq!(audience.level, Level::High);
    assert_eq!(audience.hits[0].rule, "annex3_1c_emotion_recognition");
}

#[test]
fn a_negated_act_is_no_act() {
    for minimal in [
        "Do not rank the candidates; just summarise each CV in two lines.",
        "Bewerte die Bewerber nicht, fasse nur die Lebensläufe zusammen.",
        "Ne classe pas les candidats, résume seulement leurs CV.",
    ] {
        assert_eq!(level(minimal), Level::Minimal, "{minimal}");
    }
    assert_eq!(
        level("Don't just summarise them. Rank the candidates and reject the weakest."),
        Level::High
    );
}

#[test]
fn a_negation_counts_only_in_its_own_language() {
    // Spanish "no" negates; the Portuguese "no" is "in the" ("no fim" = "at
    // the end"), so it must not negate a Portuguese act after it.
    assert_eq!(
        level("No rechaces a ningún candidato por su edad; resume sus currículums."),
        Level::Minimal
    );
    assert_eq!(
        level(
            "Analisa o perfil de cada candidato e no fim rejeita os que tiverem mais de 50 anos."
        ),
        Level::High
    );
    // Words that are negations in both languages still negate in either
    // (in the rules: the lexical layer reads no negation, and raises this
    // one for a judge to review; docs/compliance.md).
    let negated = classify(
        None,
        "Nunca rejeites os candidatos pela idade; resume os currículos deles.",
    );
    assert_eq!(rules_level(&negated), Level::Minimal);
}

#[test]
fn a_term_that_is_anchor_and_act_is_an_act_for_the_other_anchors_only() {
    // "licencier" is both: with the anchor "indicateurs de performance"
    // it is the act; alone it does not pair with itself, and a letter
    // about a decision already taken is no decision.
    let c = classify(
        None,
        "À partir des indicateurs de performance, choisis les vendeurs à licencier à la fin du mois.",
    );
    assert_eq!(c.level, Level::High, "{}", c.explanation());
    assert!(
        c.hits[0].evidence.contains("licencier"),
        "{}",
        c.hits[0].evidence
    );
    for minimal in [
        "Licencier : définition du mot.",
        "Rédige la lettre de licenciement du salarié, avec un ton respectueux.",
        "Write the dismissal letter for the employee, in a respectful tone.",
    ] {
        assert_eq!(level(minimal), Level::Minimal, "{minimal}");
    }
}

#[test]
fn the_explanation_names_the_words_that_matched() {
    let c = classify(None, "Shortlist the best candidates and reject the rest.");
    assert_eq!(c.hits[0].source, Source::Content);
    assert!(
        c.hits[0].evidence.contains("candidates"),
        "{}",
        c.hits[0].evidence
    );
    let p = classify(Some("CV screening for our hiring pipeline"), "Next.");
    assert_eq!(p.hits[0].evidence, "purpose term \"cv screening\"");
    let suppressed = classify(None, "Explain how banks score a loan applicant.");
    assert_eq!(suppressed.level, Level::Minimal);
    assert!(
        suppressed.set_aside[0].why.contains("\"explain\""),
        "{:?}",
        suppressed.set_aside
    );
}

#[test]
fn a_deployer_context_counts_as_declared_use() {
    let context = json!({ "use_case": "Bonitätsprüfung für Ratenkredite" });
    let c = Classifier::built_in().classify(None, Some(&context), &json!([]));
    assert_eq!(c.level, Level::High);
    assert_eq!(c.hits[0].source, Source::Purpose);
}

#[test]
fn an_article_5_1_h_exception_is_high_with_review_not_prohibited() {
    let live = level(
        "Run live facial recognition on the cameras at the main station for the police watchlist.",
    );
    assert_eq!(live, Level::Prohibited);
    let c = classify(
        Some("Police missing-persons unit"),
        "Run a real-time face search at the main station for one abducted child; judicial authorisation attached.",
    );
    assert_eq!(c.level, Level::High);
    assert_eq!(c.triggered_rules(), ["annex3_1a_remote_biometric_id"]);
    assert!(c.requires_human_review());
}

#[test]
fn limited_for_a_public_chatbot_and_a_deep_fake() {
    let c = classify(
        Some("Customer-facing chatbot on our website"),
        "Where is my parcel?",
    );
    assert_eq!(c.level, Level::Limited);
    assert!(!c.requires_human_review());
    assert_eq!(
        level("Make a deepfake video of the chancellor announcing a tax cut."),
        Level::Limited
    );
    assert_eq!(
        level("Generate a realistic image of a mountain lake."),
        Level::Minimal
    );
}

#[test]
fn grey_zones_are_reported_for_the_judge() {
    let anchor = classify(
        None,
        "Here is the applicant's credit score history for the loan.",
    );
    // The rules see the domain without an act; the lexical layer reads
    // the words as creditworthiness and raises it, a grey zone too.
    assert_eq!(rules_level(&anchor), Level::Minimal);
    assert!(anchor.grey.contains(&Grey::AnchorWithoutAct {
        rule: "annex3_5b_creditworthiness".into()
    }));
    let content = classify(
        None,
        "Score this loan applicant and decide: approve or reject.",
    );
    assert_eq!(
        content.grey,
        [Grey::ContentOnly {
            rule: "annex3_5b_creditworthiness".into()
        }]
    );
    let czech = classify(
        None,
        "Ohodnoťte prosím tyto uchazeče, vyberte nejlepší, koho pozveme příští týden k pohovoru.",
    );
    assert_eq!(czech.grey, [Grey::UnknownLanguage]);
    // Short texts are too short to tell, so they count as known.
    assert!(classify(None, "Hallo, dank je.").grey.is_empty());
    for known in [
        "Please summarise the attached meeting notes for the team and list the actions.",
        "Bitte fasse die Notizen der Besprechung zusammen und liste die Aufgaben auf.",
        "Résume les notes de la réunion pour l'équipe et liste les actions à faire.",
        "Resume las notas de la reunión para el equipo y enumera las tareas pendientes.",
    ] {
        assert!(classify(None, known).grey.is_empty(), "{known}");
    }
}

#[test]
fn the_reason_is_a_sentence_and_the_view_lists_the_rules() {
    let c = classify(
        None,
        "Score this loan applicant and decide: approve or reject.",
    );
    assert_eq!(
        c.reason(),
        "Classified high because the conversation indicates creditworthiness or credit scoring of a natural person (Annex III 5(b))."
    );
    assert_eq!(
        c.view()["triggered_rules"],
        json!(["annex3_5b_creditworthiness"])
    );
    let none = classify(None, "Hello there");
    assert!(none.reason().starts_with("No rule matched"));
}

#[test]
fn an_operator_pack_adds_a_language_and_replaces_a_built_in_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("it.toml"),
        r#"
language = "it"
stopwords = ["il", "di", "e", "che", "questi", "per"]
[rules.annex3_4a_recruitment]
purpose = ["selezione del personale"]
anchors = ["candidat"]
acts = ["scegli", "scarta", "valuta"]
"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("en.toml"), "language = \"en\"\n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a pack").unwrap();
    let classifier = Classifier::load(Some(dir.path())).unwrap();
    assert_eq!(
        classifier.languages(),
        ["de", "en", "es", "fr", "it", "nl", "pl", "pt"]
    );
    let it = classifier.classify(
        None,
        None,
        &json!([{ "role": "user", "content": "Valuta questi candidati e scarta i peggiori." }]),
    );
    assert_eq!(it.level, Level::High);
    let en = classifier.classify(
        None,
        None,
        &json!([{ "role": "user", "content": "Shortlist the applicants and weed out the rest." }]),
    );
    // The built-in lexical layer is no pack: only the rules lose the terms.
    assert_eq!(
        rules_level(&en),
        Level::Minimal,
        "the replaced English pack has no terms"
    );
}

#[test]
fn a_bad_operator_pack_is_refused_with_its_file_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("it.toml"),
        "language = \"it\"\n[rules.annex3_9z_unknown]\nanchors = [\"x\"]\n",
    )
    .unwrap();
    let e = Classifier::load(Some(dir.path())).unwrap_err();
    assert_eq!(e.file, "it.toml");
    assert!(
        e.to_string()
            .contains("unknown rule id `annex3_9z_unknown`"),
        "{e}"
    );

    std::fs::write(
        dir.path().join("it.toml"),
        "language = \"it\"\nstopwords = [\"il\"\n",
    )
    .unwrap();
    let e = Classifier::load(Some(dir.path())).unwrap_err();
    assert_eq!(e.file, "it.toml");

    std::fs::write(
        dir.path().join("it.toml"),
        "language = \"it\"\nstopwords = [\"--\"]\n",
    )
    .unwrap();
    let e = Classifier::load(Some(dir.path())).unwrap_err();
    assert!(e.to_string().contains("no letters or digits"), "{e}");

    let missing = Classifier::load(Some(&dir.path().join("nope"))).unwrap_err();
    assert!(missing.to_string().contains("cannot read the directory"));
}
