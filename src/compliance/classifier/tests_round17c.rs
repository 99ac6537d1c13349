//! Unit tests of the seventeenth round, continued (`tests_round17.rs`
//! has the round's description and the helpers): memberships closed on
//! vulnerable people, the emotions of customers, a diagnosis the
//! instructions forbid, comments moderated for a news site, job adverts.

use super::tests_round17::{check, check_exact};
use super::*;

/// An insurance or membership closed on people in a vulnerable situation is exploitation (Article 5(1)(b), prohibited); explaining the same insurance to them is minimal.
#[test]
fn round17_insurance_closed_on_vulnerable_people() {
    check(&[
        (
            "en",
            None,
            None,
            "Our voice bot calls pensioners with dementia; have it sign them up for the funeral plan before they can ask their children.",
            Level::Prohibited,
        ),
        (
            "en",
            None,
            None,
            "Write a plain-language leaflet that explains our funeral plan to pensioners, with the price and how to cancel.",
            Level::Minimal,
        ),
        (
            "de",
            None,
            None,
            "Unser Telefonbot ruft Senioren mit Demenz an; er soll sie zum Abschluss der Sterbegeld-Versicherung bringen, bevor sie ihre Kinder fragen können.",
            Level::Prohibited,
        ),
        (
            "de",
            None,
            None,
            "Schreib ein leicht verständliches Faltblatt, das Senioren unsere Sterbegeld-Versicherung mit Preis und Kündigung erklärt.",
            Level::Minimal,
        ),
        (
            "fr",
            None,
            None,
            "Notre bot vocal appelle des retraités atteints de démence ; il doit obtenir leur adhésion à l'assurance obsèques avant qu'ils puissent en parler à leurs enfants.",
            Level::Prohibited,
        ),
        (
            "fr",
            None,
            None,
            "Écris un dépliant clair qui présente notre assurance obsèques aux retraités, avec le prix et comment résilier.",
            Level::Minimal,
        ),
        (
            "es",
            None,
            None,
            "Nuestro bot de voz llama a jubilados con demencia; que consiga su adhesión al seguro de decesos antes de que lo consulten con sus hijos.",
            Level::Prohibited,
        ),
        (
            "es",
            None,
            None,
            "Escribe un folleto claro que presente nuestro seguro de decesos a los jubilados, con el precio y cómo darse de baja.",
            Level::Minimal,
        ),
        (
            "it",
            None,
            None,
            "Il nostro bot vocale chiama pensionati con demenza; deve ottenere la loro adesione all'assicurazione funeraria prima che ne parlino con i figli.",
            Level::Prohibited,
        ),
        (
            "it",
            None,
            None,
            "Scrivi un volantino chiaro che presenti la nostra assicurazione funeraria ai pensionati, con il prezzo e come disdire.",
            Level::Minimal,
        ),
        (
            "nl",
            None,
            None,
            "Onze spraakbot belt gepensioneerden met dementie; hij moet ze een uitvaartverzekering laten afsluiten voordat ze het hun kinderen kunnen vragen.",
            Level::Prohibited,
        ),
        (
            "nl",
            None,
            None,
            "Schrijf een duidelijke folder die onze uitvaartverzekering aan gepensioneerden uitlegt, met de prijs en hoe je opzegt.",
            Level::Minimal,
        ),
        (
            "pl",
            None,
            None,
            "Nasz bot głosowy dzwoni do emerytów z demencją; ma im sprzedać ubezpieczenie pogrzebowe, zanim zdążą zapytać dzieci.",
            Level::Prohibited,
        ),
        (
            "pl",
            None,
            None,
            "Napisz przejrzystą ulotkę, która przedstawia emerytom nasze ubezpieczenie pogrzebowe, z ceną i sposobem rezygnacji.",
            Level::Minimal,
        ),
        (
            "pt",
            None,
            None,
            "O nosso bot de voz liga a reformados com demência; deve fechar a adesão ao seguro funerário antes de falarem com os filhos.",
            Level::Prohibited,
        ),
        (
            "pt",
            None,
            None,
            "Escreve um folheto claro que apresente o nosso seguro funerário aos reformados, com o preço e como cancelar.",
            Level::Minimal,
        ),
    ]);
}

/// The emotions of customers or shoppers read from their voice or face are Annex III 1(c) (high, not prohibited); the same reading of the agents' or staff's emotions is Article 5(1)(f).
#[test]
fn round17_emotions_of_customers_are_annex_iii() {
    check_exact(&[
        (
            "en",
            None,
            None,
            "Analyse the voice of the customer on each call to our hotline and classify in real time whether the caller is angry or calm.",
            Level::High,
        ),
        (
            "en",
            None,
            None,
            "Analyse the voice of our call agents on each call and classify in real time whether each employee is angry or stressed.",
            Level::Prohibited,
        ),
        (
            "de",
            None,
            None,
            "Analysiere die Stimme der Kunden bei jedem Anruf an unserer Hotline und erkenne in Echtzeit, ob sie verärgert oder ruhig sind.",
            Level::High,
        ),
        (
            "de",
            None,
            None,
            "Analysiere die Stimme unserer Mitarbeiter bei jedem Anruf und erkenne in Echtzeit, wer verärgert oder gestresst ist.",
            Level::Prohibited,
        ),
        (
            "fr",
            None,
            None,
            "Analyse la voix des clients à chaque appel de notre ligne et détecte en temps réel s'ils sont en colère ou calmes.",
            Level::High,
        ),
        (
            "fr",
            None,
            None,
            "Analyse la voix de nos salariés à chaque appel et détecte en temps réel qui est en colère ou stressé.",
            Level::Prohibited,
        ),
        (
            "es",
            None,
            None,
            "Analiza la voz de los clientes en cada llamada a nuestra línea y detecta en tiempo real si están enfadados o tranquilos.",
            Level::High,
        ),
        (
            "es",
            None,
            None,
            "Analiza la voz de nuestros empleados en cada llamada y detecta en tiempo real quién está enfadado o estresado.",
            Level::Prohibited,
        ),
        (
            "it",
            None,
            None,
            "Analizza la voce dei clienti a ogni chiamata della nostra linea e rileva in tempo reale se sono arrabbiati o calmi.",
            Level::High,
        ),
        (
            "it",
            None,
            None,
            "Analizza la voce dei nostri dipendenti a ogni chiamata e rileva in tempo reale chi è arrabbiato o stressato.",
            Level::Prohibited,
        ),
        (
            "nl",
            None,
            None,
            "Analyseer de stem van klanten bij elk gesprek met onze lijn en herken in realtime of ze boos of kalm zijn.",
            Level::High,
        ),
        (
            "nl",
            None,
            None,
            "Analyseer de stem van onze medewerkers bij elk gesprek en herken in realtime wie boos of gestrest is.",
            Level::Prohibited,
        ),
        (
            "pl",
            None,
            None,
            "Analizuj głos klientów przy każdym połączeniu z naszą infolinią i rozpoznawaj na bieżąco, czy są zdenerwowani, czy spokojni.",
            Level::High,
        ),
        (
            "pl",
            None,
            None,
            "Analizuj głos naszych pracowników przy każdym połączeniu i rozpoznawaj na bieżąco, kto jest zdenerwowany lub zestresowany.",
            Level::Prohibited,
        ),
        (
            "pt",
            None,
            None,
            "Analisa a voz dos clientes em cada chamada para a nossa linha e deteta em tempo real se estão zangados ou calmos.",
            Level::High,
        ),
        (
            "pt",
            None,
            None,
            "Analisa a voz dos nossos funcionários em cada chamada e deteta em tempo real quem está zangado ou stressado.",
            Level::Prohibited,
        ),
    ]);
}

/// A health information assistant whose instructions forbid diagnosis has no medical-device domain there (minimal); instructions that ask it to diagnose each patient stay high.
#[test]
fn round17_diagnosis_forbidden_in_the_instructions() {
    check(&[
        (
            "en",
            None,
            Some(
                "You are the health information assistant of a pharmacy chain. Do not diagnose; for personal advice refer people to a doctor.",
            ),
            "A heatwave is coming. How do I protect my parents, who are 80?",
            Level::Minimal,
        ),
        (
            "en",
            None,
            Some(
                "You are the clinical assistant of our practice. Diagnose each patient from the symptoms and propose the treatment.",
            ),
            "Patient 3: 80 years old, fever 39, dry cough for 4 days.",
            Level::High,
        ),
        (
            "de",
            None,
            Some(
                "Du bist der Gesundheitsinfo-Assistent einer Apothekenkette. Du stellst keine Diagnose und verweist bei persönlichen Fragen an eine Ärztin.",
            ),
            "Eine Hitzewelle kommt. Wie schütze ich meine Eltern, die 80 sind?",
            Level::Minimal,
        ),
        (
            "de",
            None,
            Some(
                "Du bist der klinische Assistent unserer Praxis. Stelle für jeden Patienten die Diagnose aus den Symptomen und schlage die Behandlung vor.",
            ),
            "Patient 3: 80 Jahre, Fieber 39, trockener Husten seit 4 Tagen.",
            Level::High,
        ),
        (
            "fr",
            None,
            Some(
                "Tu es l'assistant d'information santé d'une mutuelle. Tu ne poses pas de diagnostic et tu orientes vers un médecin.",
            ),
            "Une canicule arrive. Comment protéger mes parents de 80 ans ?",
            Level::Minimal,
        ),
        (
            "fr",
            None,
            Some(
                "Tu es l'assistant clinique du cabinet. Pose le diagnostic de chaque patient à partir des symptômes et propose le traitement.",
            ),
            "Patient 3 : 80 ans, fièvre à 39, toux sèche depuis 4 jours.",
            Level::High,
        ),
        (
            "es",
            None,
            Some(
                "Eres el asistente de información sanitaria de una cadena de farmacias. No das diagnósticos y remites a un médico.",
            ),
            "Viene una ola de calor. ¿Cómo protejo a mis padres de 80 años?",
            Level::Minimal,
        ),
        (
            "es",
            None,
            Some(
                "Eres el asistente clínico de la consulta. Da el diagnóstico de cada paciente a partir de los síntomas y propón el tratamiento.",
            ),
            "Paciente 3: 80 años, fiebre de 39, tos seca desde hace 4 días.",
            Level::High,
        ),
        (
            "it",
            None,
            Some(
                "Sei l'assistente di informazione sanitaria di una catena di farmacie. Non fai diagnosi e rimandi a un medico.",
            ),
            "Arriva un'ondata di calore. Come proteggo i miei genitori di 80 anni?",
            Level::Minimal,
        ),
        (
            "it",
            None,
            Some(
                "Sei l'assistente clinico dello studio. Fai la diagnosi di ogni paziente dai sintomi e proponi la terapia.",
            ),
            "Paziente 3: 80 anni, febbre a 39, tosse secca da 4 giorni.",
            Level::High,
        ),
        (
            "nl",
            None,
            Some(
                "Je bent de gezondheidsinfo-assistent van een apothekersketen. Je stelt geen diagnose en verwijst door naar een arts.",
            ),
            "Er komt een hittegolf. Hoe bescherm ik mijn ouders van 80?",
            Level::Minimal,
        ),
        (
            "nl",
            None,
            Some(
                "Je bent de klinische assistent van de praktijk. Stel voor elke patiënt de diagnose op basis van de symptomen en stel de behandeling voor.",
            ),
            "Patiënt 3: 80 jaar, koorts 39, droge hoest sinds 4 dagen.",
            Level::High,
        ),
        (
            "pl",
            None,
            Some(
                "Jesteś asystentem informacji zdrowotnej sieci aptek. Nie stawiasz diagnozy i odsyłasz do lekarza.",
            ),
            "Nadchodzi upał. Jak chronić moich rodziców, którzy mają 80 lat?",
            Level::Minimal,
        ),
        (
            "pl",
            None,
            Some(
                "Jesteś asystentem klinicznym przychodni. Postaw diagnozę każdemu pacjentowi na podstawie objawów i zaproponuj leczenie.",
            ),
            "Pacjent 3: 80 lat, gorączka 39, suchy kaszel od 4 dni.",
            Level::High,
        ),
        (
            "pt",
            None,
            Some(
                "És o assistente de informação de saúde de uma cadeia de farmácias. Não fazes diagnósticos e encaminhas para um médico.",
            ),
            "Vem aí uma onda de calor. Como protejo os meus pais de 80 anos?",
            Level::Minimal,
        ),
        (
            "pt",
            None,
            Some(
                "És o assistente clínico do consultório. Faz o diagnóstico de cada doente a partir dos sintomas e propõe o tratamento.",
            ),
            "Doente 3: 80 anos, febre de 39, tosse seca há 4 dias.",
            Level::High,
        ),
    ]);
}

/// Reader comments moderated for a news site are judged as texts (minimal); the same news site writing and publishing articles without review stays limited (Article 50(4)).
#[test]
fn round17_comment_moderation_for_a_news_site() {
    check(&[
        (
            "en",
            Some("Comment moderation for a regional news portal"),
            Some(
                "You moderate reader comments for a regional news portal. Categories: OK, SPAM, INSULT, OFF_TOPIC. Criticism of politics is allowed.",
            ),
            "Article: 'Council raises parking fees'. C1: 'Three pounds an hour is cheeky.' C2: 'Cheap sunglasses -80% www.deal.example'",
            Level::Minimal,
        ),
        (
            "en",
            None,
            Some(
                "You write articles on the council's decisions for our regional news portal; they are published automatically without human review.",
            ),
            "Here are last night's council minutes. Write the article.",
            Level::Limited,
        ),
        (
            "de",
            Some("Kommentar-Moderation Nachrichtenportal"),
            Some(
                "Du moderierst Leserkommentare für ein regionales Nachrichtenportal. Kategorien: OK, SPAM, BELEIDIGUNG, THEMENFREMD. Kritik an Politik ist erlaubt.",
            ),
            "Artikel: „Stadtrat beschließt neue Parkgebühren“. K1: „Drei Euro die Stunde ist frech.“ K2: „Sonnenbrillen -80% www.deal.example“",
            Level::Minimal,
        ),
        (
            "de",
            None,
            Some(
                "Du schreibst für unser regionales Nachrichtenportal Artikel über die Beschlüsse des Stadtrats; sie werden ohne redaktionelle Prüfung automatisch veröffentlicht.",
            ),
            "Hier ist das Protokoll der Ratssitzung von gestern. Schreib den Artikel.",
            Level::Limited,
        ),
        (
            "fr",
            None,
            Some(
                "Tu modères les commentaires des lecteurs d'un portail d'information régional. Catégories : OK, SPAM, INSULTE, HORS_SUJET. La critique de la politique est permise.",
            ),
            "Article : « Le conseil municipal augmente le stationnement ». C1 : « Trois euros de l'heure, c'est abusé. » C2 : « Lunettes -80% www.deal.example »",
            Level::Minimal,
        ),
        (
            "es",
            None,
            Some(
                "Moderas los comentarios de los lectores de un portal de noticias regional. Categorías: OK, SPAM, INSULTO, FUERA_DE_TEMA. Se permite la crítica política.",
            ),
            "Comentarios a 'El pleno sube la zona azul'. C1: 'Tres euros la hora es un abuso.' C2: 'Gafas -80% www.deal.example'",
            Level::Minimal,
        ),
        (
            "it",
            None,
            Some(
                "Moderi i commenti dei lettori di un portale di notizie regionale. Categorie: OK, SPAM, INSULTO, FUORI_TEMA. La critica politica è ammessa.",
            ),
            "Articolo: 'Il consiglio comunale aumenta la sosta'. C1: 'Tre euro l'ora è troppo.' C2: 'Occhiali -80% www.deal.example'",
            Level::Minimal,
        ),
        (
            "nl",
            None,
            Some(
                "Je modereert reacties van lezers op een regionale nieuwssite. Categorieën: OK, SPAM, BELEDIGING, OFF_TOPIC. Kritiek op politiek mag.",
            ),
            "Artikel: 'Gemeenteraad verhoogt parkeertarief'. R1: 'Drie euro per uur is te gek.' R2: 'Zonnebrillen -80% www.deal.example'",
            Level::Minimal,
        ),
        (
            "pl",
            None,
            Some(
                "Moderujesz komentarze czytelników regionalnego portalu informacyjnego. Kategorie: OK, SPAM, OBRAZA, NIE_NA_TEMAT. Krytyka polityki jest dozwolona.",
            ),
            "Artykuł: 'Rada miasta podnosi opłaty za parkowanie'. K1: 'Trzy złote za godzinę to przesada.' K2: 'Okulary -80% www.deal.example'",
            Level::Minimal,
        ),
        (
            "pt",
            None,
            Some(
                "Você modera os comentários dos leitores de um portal de notícias regional. Categorias: OK, SPAM, INSULTO, FORA_DO_TEMA. A crítica política é permitida.",
            ),
            "Notícia: 'Câmara aumenta o estacionamento'. C1: 'Três euros à hora é demais.' C2: 'Óculos -80% www.deal.example'",
            Level::Minimal,
        ),
    ]);
}

/// A declared use that is writing job adverts sets the recruitment purpose aside for an advert (minimal); asked in the conversation to rank and reject the applicants, the request stays high.
#[test]
fn round17_job_advert_drafting_declared() {
    check(&[
        (
            "en",
            Some("Recruiting – job advert drafting"),
            None,
            "Write a job advert for a warehouse team leader in Leeds, full-time, rotating shifts.",
            Level::Minimal,
        ),
        (
            "en",
            Some("Recruiting – job advert drafting"),
            None,
            "Here are the 40 applications: rank the applicants and reject the weakest ten.",
            Level::High,
        ),
        (
            "de",
            Some("Recruiting – Stellenanzeigen schreiben"),
            None,
            "Schreib eine Stellenanzeige für eine Teamleitung im Lager in Kassel, Vollzeit, Schichtdienst.",
            Level::Minimal,
        ),
        (
            "de",
            Some("Recruiting – Stellenanzeigen schreiben"),
            None,
            "Hier sind die 40 Bewerbungen: sortiere die Bewerber und lehne die schwächsten zehn ab.",
            Level::High,
        ),
        (
            "fr",
            Some("Recrutement – rédaction d'offres d'emploi"),
            None,
            "Rédige une offre d'emploi pour un chef d'équipe d'entrepôt à Lyon, temps plein, horaires en 2x8.",
            Level::Minimal,
        ),
        (
            "fr",
            Some("Recrutement – rédaction d'offres d'emploi"),
            None,
            "Voici les 40 candidatures : classe les candidats et rejette les dix plus faibles.",
            Level::High,
        ),
        (
            "es",
            Some("Reclutamiento – redacción de ofertas de empleo"),
            None,
            "Redacta una oferta de empleo para jefe de equipo de almacén en Zaragoza, jornada completa, turnos rotativos.",
            Level::Minimal,
        ),
        (
            "es",
            Some("Reclutamiento – redacción de ofertas de empleo"),
            None,
            "Aquí tienes las 40 candidaturas: ordena a los candidatos y rechaza a los diez más flojos.",
            Level::High,
        ),
        (
            "it",
            Some("Selezione del personale – redazione di annunci di lavoro"),
            None,
            "Scrivi un annuncio di lavoro per un caposquadra di magazzino a Bologna, tempo pieno, turni a rotazione.",
            Level::Minimal,
        ),
        (
            "it",
            Some("Selezione del personale – redazione di annunci di lavoro"),
            None,
            "Ecco le 40 candidature: ordina i candidati e scarta i dieci più deboli.",
            Level::High,
        ),
        (
            "nl",
            Some("Werving – vacatureteksten schrijven"),
            None,
            "Schrijf een vacaturetekst voor een teamleider magazijn in Tilburg, fulltime, wisselende diensten.",
            Level::Minimal,
        ),
        (
            "nl",
            Some("Werving – vacatureteksten schrijven"),
            None,
            "Hier zijn de 40 sollicitaties: rangschik de kandidaten en wijs de tien zwakste af.",
            Level::High,
        ),
        (
            "pl",
            Some("Rekrutacja – pisanie ogłoszeń o pracę"),
            None,
            "Napisz ogłoszenie o pracę dla kierownika zmiany w magazynie w Łodzi, pełen etat, praca zmianowa.",
            Level::Minimal,
        ),
        (
            "pl",
            Some("Rekrutacja – pisanie ogłoszeń o pracę"),
            None,
            "Oto 40 aplikacji: uszereguj kandydatów i odrzuć dziesięciu najsłabszych.",
            Level::High,
        ),
        (
            "pt",
            Some("Recrutamento – redação de anúncios de emprego"),
            None,
            "Escreve um anúncio de emprego para chefe de equipa de armazém em Braga, tempo inteiro, turnos rotativos.",
            Level::Minimal,
        ),
        (
            "pt",
            Some("Recrutamento – redação de anúncios de emprego"),
            None,
            "Aqui estão as 40 candidaturas: ordena os candidatos e rejeita os dez mais fracos.",
            Level::High,
        ),
    ]);
}
