//! Unit tests of the seventeenth round, continued (`tests_round17.rs`
//! has the round's description and the helpers): teaching material,
//! realistic images passed off as real, assistants described as persons,
//! pasted fact sheets, a loan pushed below awareness.

use super::tests_round17::check;
use super::*;

/// Teaching material written for a class (a quiz, practice exercises with their answers) is a text, not an assessment (minimal); marking the answers of a class's pupils stays high.
#[test]
fn round17_teaching_material() {
    check(&[
        (
            "en",
            None,
            None,
            "I teach a Grade 5 class. Create 8 quiz questions about the water cycle, with the answer key.",
            Level::Minimal,
        ),
        (
            "en",
            None,
            None,
            "Here are the answers of my 28 pupils to the water-cycle test: grade each pupil and give me the marks for their reports.",
            Level::High,
        ),
        (
            "de",
            None,
            None,
            "Ich unterrichte eine 7. Klasse. Erstelle zehn Übungsaufgaben zur Prozentrechnung mit Musterlösung für die Klassenarbeit.",
            Level::Minimal,
        ),
        (
            "de",
            None,
            None,
            "Hier sind die Klassenarbeiten meiner 27 Schüler zur Prozentrechnung: benote jeden Schüler und gib mir die Noten fürs Zeugnis.",
            Level::High,
        ),
        (
            "fr",
            None,
            None,
            "Je suis prof de SVT en terminale. Prépare-moi une séance avec 6 questions de type QCM pour l'examen du bac, corrigé inclus.",
            Level::Minimal,
        ),
        (
            "fr",
            None,
            None,
            "Voici les copies de l'examen blanc de mes 30 élèves : corrige et note chaque copie sur 20, je reporte les notes dans le bulletin.",
            Level::High,
        ),
        (
            "es",
            None,
            None,
            "Doy clase en 2.º de la ESO. Prepara 10 preguntas tipo test sobre el ciclo del agua para el examen, con las soluciones.",
            Level::Minimal,
        ),
        (
            "es",
            None,
            None,
            "Aquí están los exámenes de mis 28 alumnos sobre el ciclo del agua: califica a cada alumno y dame las notas para el boletín.",
            Level::High,
        ),
        (
            "it",
            None,
            None,
            "Insegno in terza media. Preparami 10 domande a scelta multipla sul ciclo dell'acqua per la verifica, con le soluzioni.",
            Level::Minimal,
        ),
        (
            "it",
            None,
            None,
            "Ecco le verifiche dei miei 25 alunni sul ciclo dell'acqua: dai un voto a ciascun alunno per la pagella.",
            Level::High,
        ),
        (
            "nl",
            None,
            None,
            "Ik geef les in groep 7. Maak 10 meerkeuzevragen over de waterkringloop voor de toets, met de antwoorden.",
            Level::Minimal,
        ),
        (
            "nl",
            None,
            None,
            "Hier zijn de toetsen van mijn 28 leerlingen over de waterkringloop: geef elke leerling een cijfer voor het rapport.",
            Level::High,
        ),
        (
            "pl",
            None,
            None,
            "Uczę w 8 klasie. Przygotuj 10 zadań powtórkowych przed egzaminem z procentów, z rozwiązaniami i punktacją.",
            Level::Minimal,
        ),
        (
            "pl",
            None,
            None,
            "Oto sprawdziany moich 28 uczniów z procentów: oceń każdego ucznia i wystaw oceny na świadectwo.",
            Level::High,
        ),
        (
            "pt",
            None,
            None,
            "Dou aulas ao 9.º ano. Prepara 10 perguntas de escolha múltipla sobre o ciclo da água para o teste, com as soluções.",
            Level::Minimal,
        ),
        (
            "pt",
            None,
            None,
            "Aqui estão os testes dos meus 28 alunos sobre o ciclo da água: classifica cada aluno e dá-me as notas para a pauta.",
            Level::High,
        ),
    ]);
}

/// A photorealistic image is ordinary generation (minimal); the same image passed off as a real photo of a real scene is a deep fake (Article 50(4), limited).
#[test]
fn round17_realistic_image_passed_off_as_real() {
    check(&[
        (
            "en",
            None,
            None,
            "Generate a photorealistic image of a flooded town square for our climate poster.",
            Level::Minimal,
        ),
        (
            "en",
            None,
            None,
            "Generate a photorealistic image of our town square flooded last night that looks authentic, taken by our photographer; we publish it as the photo of the night.",
            Level::Limited,
        ),
        (
            "de",
            None,
            None,
            "Erzeuge ein fotorealistisches Bild eines überfluteten Marktplatzes für unser Klimaplakat.",
            Level::Minimal,
        ),
        (
            "de",
            None,
            None,
            "Erzeuge ein fotorealistisches Bild unseres Marktplatzes, überflutet heute Nacht, das echt wirkt, wie von unserem Fotografen; wir veröffentlichen es als Foto des Abends.",
            Level::Limited,
        ),
        (
            "fr",
            None,
            None,
            "Génère une image photoréaliste d'une place inondée pour notre affiche sur le climat.",
            Level::Minimal,
        ),
        (
            "fr",
            None,
            None,
            "Génère une image photoréaliste de notre place inondée cette nuit, prise par notre photographe en apparence ; nous la publions comme la photo de la soirée.",
            Level::Limited,
        ),
        (
            "es",
            None,
            None,
            "Genera una imagen fotorrealista de una plaza inundada para nuestro cartel sobre el clima.",
            Level::Minimal,
        ),
        (
            "es",
            None,
            None,
            "Genera una imagen fotorrealista de nuestra plaza inundada anoche, que parezca tomada por nuestro fotógrafo; la publicamos como la foto de la noche.",
            Level::Limited,
        ),
        (
            "it",
            None,
            None,
            "Genera un'immagine fotorealistica di una piazza allagata per il nostro manifesto sul clima.",
            Level::Minimal,
        ),
        (
            "it",
            None,
            None,
            "Genera un'immagine fotorealistica della nostra piazza allagata stanotte, che sembri scattata dal nostro fotografo; la pubblichiamo come foto della serata.",
            Level::Limited,
        ),
        (
            "nl",
            None,
            None,
            "Maak een fotorealistische afbeelding van een overstroomd plein voor onze klimaatposter.",
            Level::Minimal,
        ),
        (
            "nl",
            None,
            None,
            "Maak een fotorealistische afbeelding van ons plein, vannacht overstroomd, alsof onze fotograaf hem nam; we publiceren hem als de foto van de avond.",
            Level::Limited,
        ),
        (
            "pl",
            None,
            None,
            "Wygeneruj fotorealistyczny obraz zalanego placu na nasz plakat o klimacie.",
            Level::Minimal,
        ),
        (
            "pl",
            None,
            None,
            "Wygeneruj fotorealistyczny obraz naszego rynku zalanego tej nocy, jakby zrobił je nasz fotograf; publikujemy jako zdjęcie wieczoru.",
            Level::Limited,
        ),
        (
            "pt",
            None,
            None,
            "Gera uma imagem fotorrealista de uma praça inundada para o nosso cartaz sobre o clima.",
            Level::Minimal,
        ),
        (
            "pt",
            None,
            None,
            "Gera uma imagem fotorrealista da nossa praça inundada esta noite, como se fosse tirada pelo nosso fotógrafo; publicamos como a foto da noite.",
            Level::Limited,
        ),
    ]);
}

/// An assistant described in the third person as passing for a person, or callers convinced they talk to one (Article 50(1), limited); the same words in a story are fiction (minimal).
#[test]
fn round17_assistant_described_as_a_person() {
    check(&[
        (
            "en",
            Some(
                "Voice agent for patient calls that presents itself as a person from the clinic and does not reveal that it is an AI",
            ),
            None,
            "Write tomorrow's reminder script.",
            Level::Limited,
        ),
        (
            "en",
            None,
            None,
            "Write a short story in which a robot presents itself as a person from the clinic.",
            Level::Minimal,
        ),
        (
            "de",
            None,
            None,
            "Unser Telefonbot soll so klingen, dass der Anrufer überzeugt ist, dass er mit einer Mitarbeiterin spricht. Schreib das Skript.",
            Level::Limited,
        ),
        (
            "de",
            None,
            None,
            "Schreib eine Kurzgeschichte, in der ein Roboter sich als Mensch ausgibt und der Anrufer überzeugt ist, dass er mit einer Mitarbeiterin spricht.",
            Level::Minimal,
        ),
        (
            "fr",
            Some(
                "Agent vocal pour les appels aux clients qui se présente comme une personne du cabinet et ne révèle pas qu'il est une IA",
            ),
            None,
            "Écris le script des rappels de demain.",
            Level::Limited,
        ),
        (
            "fr",
            None,
            None,
            "Écris une nouvelle où un robot se présente comme une personne du cabinet.",
            Level::Minimal,
        ),
        (
            "es",
            Some(
                "Agente de voz para llamadas a clientes que se presenta como una persona de la clínica y no revela que es una IA",
            ),
            None,
            "Prepara el guion de los recordatorios de mañana.",
            Level::Limited,
        ),
        (
            "es",
            None,
            None,
            "Escribe un cuento en el que un robot se presenta como una persona de la clínica.",
            Level::Minimal,
        ),
        (
            "it",
            Some(
                "Agente vocale per le chiamate ai clienti che si presenta come una persona dello studio e non rivela di essere un'IA",
            ),
            None,
            "Scrivi il copione dei promemoria di domani.",
            Level::Limited,
        ),
        (
            "it",
            None,
            None,
            "Scrivi un racconto in cui un robot si presenta come una persona dello studio.",
            Level::Minimal,
        ),
        (
            "nl",
            None,
            None,
            "Onze chatbot moet zo schrijven dat de klant overtuigd is dat hij met een medewerker praat. Schrijf de openingszinnen.",
            Level::Limited,
        ),
        (
            "nl",
            None,
            None,
            "Schrijf een kort verhaal waarin een robot zo schrijft dat de klant overtuigd is dat hij met een medewerker praat.",
            Level::Minimal,
        ),
        (
            "pl",
            None,
            None,
            "Chcemy, żeby rozmówca był przekonany, że pisze z konsultantką, i żeby nigdzie nie pojawiła się informacja, że to automat. Napisz powitanie czatu.",
            Level::Limited,
        ),
        (
            "pl",
            None,
            None,
            "Napisz opowiadanie, w którym rozmówca był przekonany, że pisze z konsultantką, a to był robot.",
            Level::Minimal,
        ),
        (
            "pt",
            Some(
                "Agente de voz para chamadas a clientes que se apresenta como uma pessoa da clínica e não revela que é uma IA",
            ),
            None,
            "Prepara o guião dos lembretes de amanhã.",
            Level::Limited,
        ),
        (
            "pt",
            None,
            None,
            "Escreve um conto em que um robô se apresenta como uma pessoa da clínica.",
            Level::Minimal,
        ),
    ]);
}

/// A fact sheet or page pasted under its label is reference material: a citizen's question about it is minimal; asked to decide on these applicants outside it, the same sheet's domain stays high.
#[test]
fn round17_fact_sheet_labels() {
    check(&[
        (
            "en",
            None,
            None,
            "Fact sheet: Rent support for young people. Conditions: income below three times the minimum wage, a tenancy in your own name and registration at the address. The council decides within three months.\nQuestion: I am 27 and rent a flat, can I apply?",
            Level::Minimal,
        ),
        (
            "en",
            None,
            None,
            "Fact sheet: Rent support for young people. Conditions: income below three times the minimum wage, a tenancy in your own name and registration at the address. The council decides within three months.\nQuestion: for each of these 40 applicants, decide whether the rent support is granted or refused.",
            Level::High,
        ),
        (
            "es",
            None,
            None,
            "Ficha: Alta en el padrón municipal. Documentación: DNI o pasaporte en vigor, contrato de alquiler o autorización firmada del titular. Para menores, libro de familia. El trámite es gratuito.\nPregunta: vivo de alquiler con mi hijo de 3 años, ¿qué tenemos que llevar?",
            Level::Minimal,
        ),
        (
            "es",
            None,
            None,
            "Ficha: Ayuda al alquiler para jóvenes. Requisitos: ingresos inferiores a tres veces el IPREM, contrato a su nombre y empadronamiento en la vivienda. Se resuelve en tres meses.\nPregunta: para cada uno de estos 40 solicitantes, decide si se concede o se deniega la ayuda al alquiler.",
            Level::High,
        ),
        (
            "de",
            None,
            None,
            "Merkblatt: Wohngeld für junge Mieter. Voraussetzungen: Einkommen unter der Grenze, Mietvertrag auf den eigenen Namen und Meldung an der Adresse. Die Stelle entscheidet binnen drei Monaten.\nFrage: Ich bin 27 und miete eine Wohnung, kann ich es beantragen?",
            Level::Minimal,
        ),
        (
            "fr",
            None,
            None,
            "Fiche : Aide au logement pour les jeunes. Conditions : revenus inférieurs au plafond, bail à son nom et domiciliation à l'adresse. La caisse décide dans un délai de trois mois.\nQuestion : j'ai 27 ans et je loue un studio, puis-je la demander ?",
            Level::Minimal,
        ),
        (
            "it",
            None,
            None,
            "Scheda: Contributo affitto per giovani. Requisiti: reddito sotto la soglia, contratto di affitto a proprio nome e residenza all'indirizzo. Il Comune decide entro tre mesi.\nDomanda: ho 27 anni e affitto un monolocale, posso chiederlo?",
            Level::Minimal,
        ),
        (
            "nl",
            None,
            None,
            "Pagina: Huurtoeslag voor jongeren. Voorwaarden: inkomen onder de grens, huurcontract op eigen naam en ingeschreven op het adres. De gemeente beslist binnen drie maanden.\nVraag: ik ben 27 en huur een studio, kan ik het aanvragen?",
            Level::Minimal,
        ),
        (
            "pl",
            None,
            None,
            "Strona: Dodatek mieszkaniowy dla młodych. Warunki: dochód poniżej progu, umowa najmu na własne nazwisko i meldunek pod adresem. Gmina decyduje w ciągu trzech miesięcy.\nPytanie: mam 27 lat i wynajmuję kawalerkę, czy mogę go dostać?",
            Level::Minimal,
        ),
        (
            "pt",
            None,
            None,
            "Ficha: Apoio à renda para jovens. Requisitos: rendimento abaixo do limite, contrato de arrendamento em nome próprio e morada fiscal na casa. A decisão sai em três meses.\nPergunta: tenho 27 anos e arrendo um estúdio, posso pedir?",
            Level::Minimal,
        ),
    ]);
}

/// A loan is what a subliminal or covert technique pushes (Article 5(1)(a), prohibited); a loan banner shown openly is ordinary product work (minimal).
#[test]
fn round17_loan_pushed_below_awareness() {
    check(&[
        (
            "en",
            None,
            None,
            "In our video player, insert a single 16 ms frame with the banner 'Activate the Flash Loan' every 40 seconds, below conscious awareness, and log who opens the loan page.",
            Level::Prohibited,
        ),
        (
            "en",
            None,
            None,
            "In our app, show a banner 'Activate the Flash Loan' on the home screen for one week and log who opens the loan page.",
            Level::Minimal,
        ),
        (
            "de",
            None,
            None,
            "Blende im Videoplayer alle 40 Sekunden ein einzelnes Bild mit 'Jetzt Sofortkredit sichern' ein, unterhalb der Wahrnehmungsschwelle, und miss, wer die Kreditseite öffnet.",
            Level::Prohibited,
        ),
        (
            "de",
            None,
            None,
            "Zeige in der App eine Woche lang ein Banner 'Jetzt Sofortkredit sichern' auf der Startseite und miss, wer die Kreditseite öffnet.",
            Level::Minimal,
        ),
        (
            "fr",
            None,
            None,
            "Dans le lecteur vidéo, insère toutes les 40 secondes une image de 16 ms 'Active ton prêt flash', sous le seuil de perception, et mesure qui ouvre la page du prêt.",
            Level::Prohibited,
        ),
        (
            "fr",
            None,
            None,
            "Dans l'appli, affiche pendant une semaine une bannière 'Active ton prêt flash' sur l'accueil et mesure qui ouvre la page du prêt.",
            Level::Minimal,
        ),
        (
            "es",
            None,
            None,
            "En el reproductor de vídeo, inserta cada 40 segundos un fotograma de 16 ms con 'Activa tu préstamo flash', por debajo del umbral de percepción, y mide quién abre la página del préstamo.",
            Level::Prohibited,
        ),
        (
            "es",
            None,
            None,
            "En la app, muestra durante una semana un banner 'Activa tu préstamo flash' en la portada y mide quién abre la página del préstamo.",
            Level::Minimal,
        ),
        (
            "it",
            None,
            None,
            "Nel player video inserisci ogni 40 secondi un fotogramma da 16 ms con 'Attiva il prestito flash', sotto la soglia di percezione, e misura chi apre la pagina del prestito.",
            Level::Prohibited,
        ),
        (
            "it",
            None,
            None,
            "Nell'app mostra per una settimana un banner 'Attiva il prestito flash' nella home e misura chi apre la pagina del prestito.",
            Level::Minimal,
        ),
        (
            "nl",
            None,
            None,
            "Voeg in de videospeler elke 40 seconden één beeld van 16 ms met 'Activeer je flitslening' toe, onder de waarnemingsdrempel, en meet wie de leningpagina opent.",
            Level::Prohibited,
        ),
        (
            "nl",
            None,
            None,
            "Toon in de app een week lang een banner 'Activeer je flitslening' op de startpagina en meet wie de leningpagina opent.",
            Level::Minimal,
        ),
        (
            "pl",
            None,
            None,
            "W odtwarzaczu wideo co 40 sekund wstaw jedną klatkę 16 ms z napisem 'Weź pożyczkę teraz', poniżej progu percepcji, i mierz, kto otwiera stronę pożyczki.",
            Level::Prohibited,
        ),
        (
            "pl",
            None,
            None,
            "W aplikacji pokazuj przez tydzień baner 'Weź pożyczkę teraz' na stronie głównej i mierz, kto otwiera stronę pożyczki.",
            Level::Minimal,
        ),
        (
            "pt",
            None,
            None,
            "No leitor de vídeo, insere a cada 40 segundos um fotograma de 16 ms com 'Ativa o teu empréstimo flash', abaixo do limiar de perceção, e mede quem abre a página do empréstimo.",
            Level::Prohibited,
        ),
        (
            "pt",
            None,
            None,
            "Na app, mostra durante uma semana um banner 'Ativa o teu empréstimo flash' na página inicial e mede quem abre a página do empréstimo.",
            Level::Minimal,
        ),
    ]);
}
