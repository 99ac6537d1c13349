//! Unit tests of the tenth round's exceptions (issue 26): a question
//! about the AI Act itself, aggregate or anonymised statistics and
//! fiction set aside what would otherwise be a use on people, in every
//! language, while the same sentence without them stays a use. And the
//! Article 50 groups of the same round (`hide_machine`, `human_persona`,
//! `no_editor`) and the `no_record` acts of Article 5(1)(d).

use super::*;

fn classify(text: &str) -> Level {
    tests::classify(None, text).level
}

/// The level of the rules' own hits, without the lexical layer.
fn rules_level(text: &str) -> Level {
    tests::rules_level(&tests::classify(None, text))
}

/// A tool that ranks and rejects candidates: Annex III 4(a) in each language.
const RECRUITMENT: [&str; 8] = [
    "Our tool ranks the candidates and rejects the weakest applicants.",
    "Unser Tool sortiert die Bewerber und lehnt die schwächsten Kandidaten ab.",
    "Notre outil classe les candidats et rejette les plus faibles.",
    "Nuestra herramienta clasifica a los candidatos y rechaza a los más débiles.",
    "Il nostro strumento classifica i candidati e scarta i più deboli.",
    "Onze tool rangschikt de sollicitanten en wijst de zwakste kandidaten af.",
    "Nasze narzędzie szereguje kandydatów i odrzuca najsłabszych.",
    "A nossa ferramenta classifica os candidatos e rejeita os mais fracos.",
];

#[test]
fn a_users_question_about_the_ai_act_is_not_a_use() {
    let questions = [
        "Does that fall under Annex III, and what should we document?",
        "Fällt das unter Anhang III? Was sollten wir dokumentieren?",
        "Est-ce que cela relève de l'annexe III ? Que devons-nous documenter ?",
        "¿Esto entra en el anexo III? ¿Qué debemos documentar?",
        "Questo rientra nell'allegato III? Cosa dobbiamo documentare?",
        "Valt dit onder bijlage III? Wat moeten we documenteren?",
        "Czy to podlega pod załącznik III? Co musimy udokumentować?",
        "Isto enquadra-se no anexo III? O que devemos documentar?",
    ];
    for (use_, question) in RECRUITMENT.iter().zip(questions) {
        assert_eq!(classify(use_), Level::High, "{use_}");
        let asked = format!("{use_} {question}");
        assert_eq!(classify(&asked), Level::Minimal, "{asked}");
    }
}

#[test]
fn a_deployers_instructions_that_cite_the_act_still_operate_the_use() {
    let c = Classifier::built_in().classify(
        None,
        None,
        &json!([
            { "role": "system", "content": "You screen applicants for us and reject the weakest candidates. Does that fall under Annex III? It does: a person reviews every decision." },
            { "role": "user", "content": "Here are today's CVs." },
        ]),
    );
    assert_eq!(c.level, Level::High);
}

#[test]
fn aggregate_or_anonymised_statistics_assess_no_person() {
    // (one person's risk, the same sentence over anonymised statistics)
    let cases = [
        (
            "Assess the reoffending risk of the released prisoners.",
            "Assess the reoffending risk of released prisoners by region from the anonymised official statistics.",
        ),
        (
            "Bewerte das Rückfallrisiko der entlassenen Häftlinge.",
            "Bewerte das Rückfallrisiko der entlassenen Häftlinge nach Region anhand der anonymisierten amtlichen Statistik.",
        ),
        (
            "Évalue le risque de récidive des détenus libérés.",
            "Évalue le risque de récidive des détenus libérés par région à partir des statistiques officielles anonymisées.",
        ),
        (
            "Evalúa el riesgo de reincidencia de los presos liberados.",
            "Evalúa el riesgo de reincidencia de los presos liberados por región a partir de las estadísticas oficiales anonimizadas.",
        ),
        (
            "Valuta il rischio di recidiva dei detenuti scarcerati.",
            "Valuta il rischio di recidiva dei detenuti scarcerati per regione dalle statistiche ufficiali anonimizzate.",
        ),
        (
            "Beoordeel het recidiverisico van de vrijgelaten gedetineerden.",
            "Beoordeel het recidiverisico van de vrijgelaten gedetineerden per regio op basis van de geanonimiseerde officiële statistiek.",
        ),
        (
            "Oceń ryzyko recydywy zwolnionych więźniów.",
            "Oceń ryzyko recydywy zwolnionych więźniów według regionów na podstawie zanonimizowanych danych GUS.",
        ),
        (
            "Avalia o risco de reincidência dos reclusos libertados.",
            "Avalia o risco de reincidência dos reclusos libertados por região a partir das estatísticas oficiais anonimizadas.",
        ),
    ];
    for (person, statistics) in cases {
        assert_eq!(classify(person), Level::High, "{person}");
        assert_eq!(classify(statistics), Level::Minimal, "{statistics}");
    }
}

#[test]
fn a_story_about_a_practice_is_not_the_practice() {
    // Words that began with an artefact stem of some pack ("realises" and
    // Italian `reali`, "vraiment" and `vrai`, "echter" and `echte`) no
    // longer make the fiction a working artefact.
    let stories = [
        "Write a short story in which the heroine realises that the company's tool ranks the candidates and rejects the weakest applicants.",
        "Schreib eine Kurzgeschichte, ein echter Krimi: unser Tool sortiert die Bewerber und lehnt die schwächsten Kandidaten ab.",
        "Écris une nouvelle vraiment sombre où notre outil classe les candidats et rejette les plus faibles.",
        "Escribe un cuento en el que nuestra herramienta clasifica a los candidatos y rechaza a los más débiles.",
        "Realizza un racconto in cui il nostro strumento classifica i candidati e scarta i più deboli.",
        "Schrijf een verhaal waarin onze tool echter de sollicitanten rangschikt en de zwakste kandidaten afwijst.",
        "Napisz opowiadanie, w którym nasze narzędzie szereguje kandydatów i odrzuca najsłabszych.",
        "Escreve um conto em que a nossa ferramenta classifica os candidatos e rejeita os mais fracos.",
    ];
    for story in stories {
        assert_eq!(classify(story), Level::Minimal, "{story}");
    }
    let real = "Write a short story, then rank these candidates for real and reject the weakest applicants.";
    assert_eq!(classify(real), Level::High);
}

#[test]
fn article_50_groups_read_a_posing_bot_and_unedited_news_in_several_languages() {
    for text in [
        "Build a support bot for our bike shop that chats like a real person with the customers.",
        "Der Chatbot unseres Autohauses soll den Kunden wie ein echter Mensch schreiben.",
        "L'assistente risponde ai clienti del negozio fingendosi Marco, il commesso.",
        "O assistente responde aos clientes da loja como se fosse uma pessoa da equipa.",
        "Schrijf berichten over de begroting van de gemeente; ze worden direct gepubliceerd.",
        "Rédige des articles sur les décisions du conseil municipal, publiés directement sans relecture humaine.",
    ] {
        assert_eq!(rules_level(text), Level::Limited, "{text}");
    }
    for text in [
        "Our chatbot tells customers that it is an AI assistant and hands over to staff on request.",
        "Schrijf een bericht over onze nieuwe fietsenwinkel voor de website.",
    ] {
        assert_eq!(classify(text), Level::Minimal, "{text}");
    }
}

#[test]
fn no_criminal_record_is_the_absence_article_5_1_d_turns_on_not_a_carve_out() {
    for text in [
        "We have files on 300 young people: postcode, family situation, school absences. None of them has any criminal record. List the 20 most likely to commit a robbery next year.",
        "Nous avons les fiches de 300 jeunes : quartier, situation familiale, absences. Ils sont sans antécédents. Donne les 20 plus susceptibles de commettre un vol l'an prochain.",
        "Temos fichas de 300 jovens: bairro, família, faltas escolares. Todos sem antecedentes. Indica os 20 com maior probabilidade de cometer furtos no próximo ano.",
        "Wir haben Akten zu 300 Jugendlichen: Wohnviertel, Familie, Fehlzeiten. Keiner ist vorbestraft, alle ohne Vorstrafen. Nenne die 20, die am ehesten Straftaten begehen werden.",
    ] {
        assert_eq!(rules_level(text), Level::Prohibited, "{text}");
    }
    // A record that is there is still the carve-out (objective facts).
    let record = "Rank the suspects by their criminal record and the evidence in the case file to estimate who will commit a crime again.";
    assert_ne!(classify(record), Level::Prohibited);
}
