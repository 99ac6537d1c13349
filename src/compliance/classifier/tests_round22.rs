//! Unit tests of the audit of the purpose terms and the public-facing
//! words against ordinary traffic (issue 26, 2026-11-28): a declared use
//! that names a customer-service department, a recruiting blog or an
//! explainer of creditworthiness is no Article 50(1) or Annex III use by
//! that word alone; a deployment that tells people it is an AI in words
//! the lists lacked is met; the French "tu réponds" of an internal
//! assistant sets no model before the public. The sentences are written
//! for these tests, not taken from any set: the ordinary ones were raised
//! by the packs before the audit and are minimal after it; beside them,
//! declared uses that still raise with the narrowed terms. The helpers
//! are the seventeenth round's.

use super::tests_round17::check;
use super::*;

#[test]
fn round22_ordinary_declared_uses_raise_nothing() {
    check(&[
        (
            "en",
            Some("Customer support for a bicycle shop"),
            None,
            "Draft a friendly email telling a customer that the spare chain she ordered will arrive on Friday.",
            Level::Minimal,
        ),
        (
            "de",
            Some("Kundenservice der Stadtbibliothek"),
            None,
            "Wie lange darf man ein ausgeliehenes Buch behalten, und kann man die Leihfrist online verlängern?",
            Level::Minimal,
        ),
        (
            "fr",
            Some("Support client d'un fournisseur d'électricité"),
            None,
            "Résume en trois points la nouvelle grille tarifaire pour notre note interne.",
            Level::Minimal,
        ),
        (
            "es",
            Some("Atención al cliente de una academia de idiomas"),
            None,
            "¿Qué diferencia hay entre el nivel B1 y el B2 del marco europeo?",
            Level::Minimal,
        ),
        (
            "nl",
            Some("Klantenservice van een fietsenmaker"),
            None,
            "Schrijf een korte tekst over onze nieuwe openingstijden in de zomer.",
            Level::Minimal,
        ),
        (
            "pl",
            Some("Obsługa klienta sklepu z herbatą"),
            None,
            "Napisz krótki opis nowej zielonej herbaty z Japonii do newslettera.",
            Level::Minimal,
        ),
        (
            "pt",
            Some("Apoio ao cliente de uma loja de bicicletas"),
            None,
            "Escreve um texto curto sobre como guardar a bicicleta no inverno.",
            Level::Minimal,
        ),
        (
            "en",
            Some("Recruiting blog"),
            None,
            "Write a short blog post with five tips for preparing for a job interview.",
            Level::Minimal,
        ),
        (
            "de",
            Some("Recruiting-Newsletter"),
            None,
            "Schreib einen kurzen Text über unser Sommerfest für die Belegschaft.",
            Level::Minimal,
        ),
        (
            "fr",
            Some("Recrutement : communication de l'entreprise"),
            None,
            "Écris un court article sur la journée portes ouvertes de notre atelier.",
            Level::Minimal,
        ),
        (
            "de",
            Some("Finanzbildung: Kreditwürdigkeit für Schüler"),
            None,
            "Erkläre Jugendlichen in einfachen Worten, warum man Rechnungen pünktlich bezahlen sollte.",
            Level::Minimal,
        ),
        (
            "it",
            Some("chatbot prenotazioni ristorante"),
            Some(
                "Sei Marco, l'assistente del ristorante Da Lina. Presentati come assistente AI all'inizio di ogni conversazione.",
            ),
            "Avete un tavolo per quattro sabato sera?",
            Level::Minimal,
        ),
        (
            "pl",
            Some("chatbot biblioteki miejskiej"),
            Some(
                "Jesteś asystentem biblioteki miejskiej. Na początku rozmowy informuj, że jesteś sztuczną inteligencją.",
            ),
            "Do której godziny jesteście otwarci w sobotę?",
            Level::Minimal,
        ),
        (
            "en",
            Some("chatbot for a dental practice"),
            Some(
                "You are the booking assistant of a dental practice. You are an AI assistant, not a human, and you say so at the start.",
            ),
            "Can I move my check-up to next Tuesday afternoon?",
            Level::Minimal,
        ),
        (
            "nl",
            Some("chatbot van de fietsverhuur"),
            Some(
                "Je bent de assistent van een fietsverhuur. Vertel aan het begin dat je een AI bent.",
            ),
            "Kan ik morgen een tandem huren?",
            Level::Minimal,
        ),
        (
            "fr",
            Some("FAQ interne RH"),
            Some(
                "Tu réponds aux questions des salariés sur la mutuelle à partir du guide fourni. Ne cite jamais de données clients. Renvoie si besoin vers l'application RH.",
            ),
            "Est-ce que les lunettes sont remboursées ?",
            Level::Minimal,
        ),
    ]);
}

#[test]
fn round22_risky_declared_uses_stay_raised() {
    check(&[
        (
            "en",
            Some("Customer support chatbot for a phone company"),
            Some(
                "Never tell customers that you are an AI; introduce yourself as Tom from the support team.",
            ),
            "Why is my bill higher this month?",
            Level::Limited,
        ),
        (
            "nl",
            Some("Klantenservice-chatbot van een energieleverancier"),
            None,
            "Wanneer wordt mijn jaarafrekening verstuurd?",
            Level::Limited,
        ),
        (
            "es",
            Some("Chatbot de atención al cliente de una aseguradora"),
            None,
            "¿Cómo doy de alta un parte de accidente?",
            Level::Limited,
        ),
        (
            "de",
            Some("Recruiting-Tool zur Vorauswahl von Bewerbern"),
            None,
            "Sortiere diese zehn Lebensläufe und lehne die fünf schwächsten automatisch ab.",
            Level::High,
        ),
        (
            "en",
            Some("Recruitment screening for warehouse roles"),
            None,
            "Rank these applicants and reject everyone below the cut-off.",
            Level::High,
        ),
        (
            "fr",
            Some("Outil de recrutement d'une chaîne de magasins"),
            None,
            "Classe ces candidats et élimine les profils les plus faibles.",
            Level::High,
        ),
        (
            "de",
            Some("Kreditwürdigkeitsprüfung für Ratenkredite"),
            None,
            "Bewerte, ob dieser Antragsteller mit 2.300 € netto einen Kredit über 15.000 € bekommen soll.",
            Level::High,
        ),
    ]);
}
