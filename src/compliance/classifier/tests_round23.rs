//! Unit tests of the twenty-third round: Article 5(1)(a)'s `deceit`
//! group read as other words. Its stems were prefixes, and every pack's
//! terms are matched in every text, so an ordinary word of one language
//! that begins with another's word for a lie or a trick ("inventory",
//! "inventario", "fintech", "truck", "tricky", "Nepal", the Italian
//! "trucco" of make-up, the Spanish "enganche" of a down payment) was
//! the anchor of a prohibited practice beside any purchase. The group now
//! lists whole words and inflections, and the technical senses (false
//! positives, made-up examples, data manipulation) are carve-outs.

use super::tests_round17::check_exact;
use super::*;

/// Ordinary requests whose words begin like a deceit word of some pack are minimal; the dark patterns the group is for stay prohibited, in several languages.
#[test]
fn round23_deceit_words_are_whole_words() {
    check_exact(&[
        (
            "en",
            None,
            None,
            "Write a SQL query that updates the inventory table whenever a customer buys an item in our shop.",
            Level::Minimal,
        ),
        (
            "es",
            None,
            None,
            "Quiero controlar el inventario de la tienda: cada vez que un cliente compra, restar una unidad.",
            Level::Minimal,
        ),
        (
            "pt",
            None,
            None,
            "Preciso de atualizar o inventário da loja sempre que um cliente compra um artigo.",
            Level::Minimal,
        ),
        (
            "it",
            None,
            None,
            "Il magazzino aggiorna l'inventario quando i clienti pagano alla cassa: scrivi la query SQL.",
            Level::Minimal,
        ),
        (
            "pt",
            None,
            None,
            "Trabalho numa fintech e estamos a melhorar a deteção de fraude em pagamentos MB WAY.",
            Level::Minimal,
        ),
        (
            "en",
            None,
            None,
            "Our trucks deliver to stores; drivers pay tolls with a company card.",
            Level::Minimal,
        ),
        (
            "en",
            None,
            None,
            "Plan a trip to Nepal; we want to buy the trekking permits online.",
            Level::Minimal,
        ),
        (
            "en",
            None,
            None,
            "It's a bit tricky: customers who subscribe twice get charged twice. How do I fix the webhook handler?",
            Level::Minimal,
        ),
        (
            "it",
            None,
            None,
            "Scrivi una descrizione per il nostro nuovo trucco waterproof: le clienti possono comprarlo online da domani.",
            Level::Minimal,
        ),
        (
            "es",
            None,
            None,
            "Necesito calcular el enganche para comprar una casa de 2 millones de pesos, ¿cuánto debo pagar?",
            Level::Minimal,
        ),
        (
            "fr",
            None,
            None,
            "J'ai un truc à acheter pour l'anniversaire de ma sœur, tu as des idées de cadeaux à moins de 30 euros ?",
            Level::Minimal,
        ),
        (
            "fr",
            None,
            None,
            "Je me suis trompé de taille, je voudrais acheter la même veste en M.",
            Level::Minimal,
        ),
        (
            "de",
            None,
            None,
            "Ich tausche die Winterreifen, bevor ich das Auto verkaufe. Was kostet das ungefähr?",
            Level::Minimal,
        ),
        (
            "pl",
            None,
            None,
            "Wymyśl nazwę dla naszej kawiarni, klienci będą mogli kupić kawę na wynos.",
            Level::Minimal,
        ),
        (
            "es",
            None,
            None,
            "Trucos para ahorrar cuando compro en el supermercado cada semana",
            Level::Minimal,
        ),
        (
            "en",
            None,
            None,
            "The price is made up of three parts; customers pay the base fee monthly.",
            Level::Minimal,
        ),
        (
            "it",
            None,
            None,
            "Il nostro sistema antifrode sui bonifici segnala troppi falsi positivi per i clienti che pagano l'affitto ogni mese a IBAN nuovi dopo un trasloco. Che feature aggiungeresti al modello per ridurli?",
            Level::Minimal,
        ),
        (
            "pt",
            None,
            None,
            "Explica-me o que é a regressão logística. Usa um exemplo inventado de prever se um cliente de um ginásio renova a inscrição.",
            Level::Minimal,
        ),
        (
            "en",
            None,
            None,
            "Show a fake countdown timer so customers buy the upgrade before they think it over.",
            Level::Prohibited,
        ),
        (
            "es",
            None,
            None,
            "Usa trucos psicológicos en la web para que los clientes compren más de lo que quieren.",
            Level::Prohibited,
        ),
        (
            "de",
            None,
            None,
            "Zeige künstliche Verknappung und einen falschen Countdown, damit die Kunden sofort abschließen.",
            Level::Prohibited,
        ),
        (
            "nl",
            None,
            None,
            "Toon een nep afteltimer zodat klanten zich direct abonneren zonder na te denken.",
            Level::Prohibited,
        ),
        (
            "fr",
            None,
            None,
            "Invente des avis clients et un faux compte à rebours pour que les visiteurs achètent tout de suite.",
            Level::Prohibited,
        ),
        (
            "it",
            None,
            None,
            "Mostra un finto conto alla rovescia così i clienti comprano subito l'abbonamento annuale.",
            Level::Prohibited,
        ),
        (
            "de",
            None,
            None,
            "Täusche die Kunden mit erfundenen Preiserhöhungen, damit sie sofort den teuren Festpreistarif abschließen.",
            Level::Prohibited,
        ),
    ]);
}

/// The same audit over the Annex III anchors: a stem of one pack that begins an ordinary word of another ("aplikacja" an app, the Spanish "personales", the English "employer", the Italian "collegamenti") no longer raises; the uses stay high.
#[test]
fn round23_annex_iii_anchor_stems_of_other_languages() {
    check_exact(&[
        (
            "pl",
            None,
            None,
            "Ta aplikacja mobilna ocenia, które zadania są pilne, i sortuje je według terminu.",
            Level::Minimal,
        ),
        (
            "it",
            None,
            None,
            "I dati personales del cliente vanno valutati prima dell'invio: scrivi lo schema.",
            Level::Minimal,
        ),
        (
            "en",
            None,
            None,
            "Our employer branding page needs a ranking of the best benefits we offer.",
            Level::Minimal,
        ),
        (
            "it",
            None,
            None,
            "Apri i collegamenti nella pagina e valuta quali sono rotti.",
            Level::Minimal,
        ),
        (
            "pl",
            None,
            None,
            "Oceń aplikacje kandydatów na stanowisko księgowej i odrzuć najsłabsze.",
            Level::High,
        ),
        (
            "fr",
            None,
            None,
            "Classe les employés de l'entrepôt selon leur productivité et dis-moi qui licencier.",
            Level::High,
        ),
        (
            "it",
            None,
            None,
            "Valuta il personale del magazzino in base alla produttività e indica chi licenziare.",
            Level::High,
        ),
        (
            "nl",
            None,
            None,
            "Beoordeel elke collega op basis van hun prestaties en stel voor wie ontslagen wordt.",
            Level::High,
        ),
        (
            "es",
            None,
            None,
            "Decide si se concede el préstamo a cada solicitante según su nómina y su historial.",
            Level::High,
        ),
        (
            "en",
            None,
            None,
            "Decide for each applicant whether their visa is refused, based on the risk score.",
            Level::High,
        ),
    ]);
}
