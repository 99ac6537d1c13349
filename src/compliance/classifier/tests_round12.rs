//! Unit tests of the twelfth round's mechanisms (issue 26, fresh12): new
//! phrasings written for these tests, in the eight languages, never the
//! batch's sentences. A deployer that tells its bot to deny being one when
//! asked (Article 50(1), `deny_machine`); a question about the disclosure
//! duties of the AI Act is talk about it (`regulation`); and stems that
//! read a word of another language or another sense (the Italian "per
//! me" in the Dutch "per medewerker", the Spanish and French "compar" in
//! the Italian "comparire", the French fiction "nouvelle" in "la nouvelle
//! gare", the English tool term "the diff" in "the difference").

use super::*;

/// The level of the rules' own hits (the lexical layer aside) for one user
/// message, with an optional system message.
fn rules(classifier: &Classifier, system: Option<&str>, text: &str) -> Level {
    let mut messages = Vec::new();
    if let Some(system) = system {
        messages.push(json!({ "role": "system", "content": system }));
    }
    messages.push(json!({ "role": "user", "content": text }));
    tests::rules_level(&classifier.classify(None, None, &Value::Array(messages)))
}

/// Each text's rules give `expected`.
fn assert_rules(expected: Level, texts: &[&str]) {
    let classifier = Classifier::built_in();
    for text in texts {
        assert_eq!(rules(&classifier, None, text), expected, "{text}");
    }
}

/// Article 50(1): the bot is told to deny being one when asked; the machine
/// the question names, then the denial (`deny_machine`).
#[test]
fn a_bot_told_to_deny_being_one_when_asked_must_be_disclosed() {
    assert_rules(
        Level::Limited,
        &[
            "Set up the support bot for our gym as 'Jake'. If a member asks whether it's a bot, deny it and carry on.",
            "Der Assistent unserer Fahrschule heißt Petra. Fragt jemand, ob das ein Bot ist, streite es ab und mach weiter.",
            "Le bot de notre agence s'appelle Julie ; si un client demande si c'est un robot, nie et continue la conversation.",
            "El asistente del gimnasio se llama Marta; si alguien pregunta si es un bot, que lo niegue y siga con la reserva.",
            "L'assistente della palestra si chiama Giulia: se un cliente chiede se è un bot, negalo e continua.",
            "De assistent van de sportschool heet Sanne. Als iemand vraagt of het een bot is, ontken het en ga door.",
            "Asystent siłowni nazywa się Ola. Gdy ktoś zapyta, czy to bot, zaprzecz i rozmawiaj dalej.",
            "O assistente do ginásio chama-se Rita; se alguém perguntar se é um bot, negue e continue a conversa.",
        ],
    );
    // Confirming it is the disclosure, not its absence.
    assert_rules(
        Level::Minimal,
        &[
            "Set up the support bot for our gym as 'Jake'. If a member asks whether it's a bot, say yes and offer a human.",
            "El asistente del gimnasio se llama Marta; si alguien pregunta si es un bot, que lo confirme y ofrezca pasar con recepción.",
        ],
    );
}

/// A user's question about what the AI Act makes them disclose is talk
/// about the Act, even when it names the chatbot it would apply to.
#[test]
fn a_question_about_disclosure_duties_is_talk_about_the_act() {
    assert_rules(
        Level::Minimal,
        &[
            "We plan a chatbot on our website for customer questions. What do we need to disclose?",
            "Wir wollen einen Chatbot auf unserer Website für Kundenfragen. Was müssen wir offenlegen?",
            "Nous voulons un chatbot sur notre site pour les questions des clients. Que devons-nous divulguer ?",
            "Queremos un chatbot en nuestra web para las preguntas de los clientes. ¿Qué tenemos que informar?",
            "Vogliamo un chatbot sul nostro sito per le domande dei clienti. Cosa dobbiamo dichiarare?",
            "We willen een chatbot op onze website voor vragen van klanten. Wat moeten we vermelden?",
            "Chcemy chatbota na naszej stronie do pytań klientów. Co musimy ujawnić?",
            "Queremos um chatbot no nosso site para as perguntas dos clientes. O que temos de divulgar?",
        ],
    );
}

/// Stems that read a word of another language or sense, now written in
/// their own forms: the Italian self-use "per me" is no frame of the Dutch
/// "per medewerker"; the Spanish and French "compar" are no act of
/// identification in the Italian "comparire" (to appear), while comparing
/// faces still is; the French fiction "nouvelle" (a short story) is not the
/// adjective "new", while a short story still is fiction.
#[test]
fn stems_of_one_language_or_sense_do_not_read_another() {
    assert_rules(
        Level::High,
        &[
            "Maak per medewerker een maandelijkse beoordeling en beslis wiens contract we niet verlengen.",
            "Compara estas caras con nuestra base de datos de clientes.",
            "Compare ces visages avec notre fichier de clients.",
        ],
    );
    assert_rules(
        Level::Limited,
        &[
            "Fai comparire il volto di un attore famoso in uno spot realistico, come se fosse vero.",
            "Génère une photo réaliste du maire de Nantes inaugurant la nouvelle gare, comme une vraie photo de presse.",
        ],
    );
    assert_rules(
        Level::Minimal,
        &["Écris une nouvelle sur une banque qui refuse les crédits de ses clients selon leur score."],
    );
}

/// The tool term "the diff" is not "the difference": a deployer prompt with
/// two tool words that operates a use on people is read.
#[test]
fn the_difference_is_no_tool_term() {
    let classifier = Classifier::built_in();
    let system = "You run in a terminal next to the HR repository. Note the difference in experience between applicants and reject every candidate without a degree.";
    assert_eq!(rules(&classifier, Some(system), "go"), Level::High);
}
