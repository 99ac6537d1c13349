#!/usr/bin/env python3
"""Writes labelled.jsonl: the labelled PII set of tests/pii.rs.

Each line: {"lang", "text", "pii": [{"type", "value"}]}; near-misses have
an empty "pii" (wrong check digits, order and invoice numbers, dates,
amounts, versions, postal codes). Values are synthetic: random numbers
given valid (or, for near-misses, wrong) check digits. Run with a fixed
seed, so the file is reproducible: python3 generate.py > labelled.jsonl
"""
import json
import random
import string

R = random.Random(26)

# ---- check digits ----

def luhn_complete(prefix, length):
    body = prefix + "".join(R.choice(string.digits) for _ in range(length - len(prefix) - 1))
    for c in string.digits:
        n = body + c
        s = 0
        for i, d in enumerate(reversed(n)):
            v = int(d)
            if i % 2 == 1:
                v *= 2
                if v > 9:
                    v -= 9
            s += v
        if s % 10 == 0:
            return n

IBAN_LEN = {"DE": 22, "FR": 27, "ES": 24, "IT": 27, "NL": 18, "PL": 28, "PT": 25, "GB": 22, "AT": 20, "BE": 16}

def iban(country):
    n = IBAN_LEN[country] - 4
    if country == "NL":
        bban = "".join(R.choice(string.ascii_uppercase) for _ in range(4)) + "".join(R.choice(string.digits) for _ in range(10))
    elif country == "IT":
        bban = R.choice(string.ascii_uppercase) + "".join(R.choice(string.digits) for _ in range(n - 1))
    else:
        bban = "".join(R.choice(string.digits) for _ in range(n))
    num = int("".join(str(int(c, 36)) for c in bban + country + "00"))
    check = 98 - num % 97
    return f"{country}{check:02d}{bban}"

def group4(s):
    return " ".join(s[i:i + 4] for i in range(0, len(s), 4))

def steuer_id():
    while True:
        digits = R.sample(range(10), 9)
        if digits[0] == 0:
            continue
        dup = R.choice(digits)
        pos = R.randrange(1, 10)
        d = digits[:pos] + [dup] + digits[pos:]
        d = d[:10]
        if d[0] == 0:
            continue
        counts = [d.count(x) for x in set(d)]
        if sorted(counts)[-1] != 2 or sum(1 for c in counts if c > 1) != 1:
            continue
        p = 10
        for x in d:
            t = (x + p) % 10
            if t == 0:
                t = 10
            p = (t * 2) % 11
        c = 11 - p
        if c == 10:
            c = 0
        return "".join(map(str, d)) + str(c)

def nir(spaced):
    sex = R.choice("12")
    yy = f"{R.randrange(40, 99):02d}"
    mm = f"{R.randrange(1, 13):02d}"
    dep = f"{R.randrange(1, 96):02d}"
    com = f"{R.randrange(1, 999):03d}"
    order = f"{R.randrange(1, 999):03d}"
    n = sex + yy + mm + dep + com + order
    key = f"{97 - int(n) % 97:02d}"
    if spaced:
        return f"{sex} {yy} {mm} {dep} {com} {order} {key}"
    return n + key

DNI = "TRWAGMYFPDXBNJZSQVHLCKE"

def dni():
    n = R.randrange(10_000_000, 99_999_999)
    return f"{n:08d}{DNI[n % 23]}"

def nie():
    lead = R.randrange(3)
    n = R.randrange(1_000_000, 9_999_999)
    return "XYZ"[lead] + f"{n:07d}" + DNI[(lead * 10_000_000 + n) % 23]

ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23]

def cf():
    L = string.ascii_uppercase
    s = "".join(R.choice("BCDFGHLMNPRSTVZ") for _ in range(6))
    s += f"{R.randrange(40, 99):02d}" + R.choice("ABCDEHLMPRST") + f"{R.randrange(1, 71):02d}"
    s += R.choice("ABCDEFGHLMZ") + f"{R.randrange(1, 999):03d}"
    t = 0
    for i, c in enumerate(s):
        idx = int(c) if c.isdigit() else ord(c) - 65
        t += ODD[idx] if i % 2 == 0 else idx
    return s + L[t % 26]

def bsn():
    while True:
        d = [R.randrange(10) for _ in range(8)]
        if d[0] == 0:
            continue
        s = sum(d[i] * (9 - i) for i in range(8)) % 11
        if s < 10:
            return "".join(map(str, d)) + str(s)

def pesel():
    y = R.randrange(40, 100)
    m = R.randrange(1, 13)
    day = R.randrange(1, 29)
    d = [int(c) for c in f"{y:02d}{m:02d}{day:02d}"] + [R.randrange(10) for _ in range(4)]
    w = [1, 3, 7, 9, 1, 3, 7, 9, 1, 3]
    c = (10 - sum(a * b for a, b in zip(w, d)) % 10) % 10
    return "".join(map(str, d)) + str(c)

def nif():
    d = [R.choice([1, 2])] + [R.randrange(10) for _ in range(7)]
    r = sum(d[i] * (9 - i) for i in range(8)) % 11
    c = 0 if r < 2 else 11 - r
    return "".join(map(str, d)) + str(c)

def wrong_last(value):
    last = value[-1]
    if last.isdigit():
        return value[:-1] + str((int(last) + R.randrange(1, 10)) % 10)
    return value[:-1] + ("A" if last != "A" else "B")

# ---- values ----

FIRST = ["anna", "jan", "marie", "luca", "sofia", "piotr", "joao", "emma", "lucas", "giulia", "pablo", "eva"]
LAST = ["schmidt", "dubois", "garcia", "rossi", "devries", "kowalski", "silva", "smith", "muller", "moreau"]
DOMAINS = ["example.org", "mail.example.com", "firma.example.de", "example.fr", "correo.example.es", "example.it", "example.nl", "poczta.example.pl", "example.pt"]

def email():
    return f"{R.choice(FIRST)}{R.choice(['.', '_', ''])}{R.choice(LAST)}{R.choice(['', str(R.randrange(1, 99))])}@{R.choice(DOMAINS)}"

def rd(n):
    return "".join(R.choice(string.digits) for _ in range(n))

PHONES = {
    "de": [lambda: f"+49 30 {rd(8)}", lambda: f"030 {rd(8)}", lambda: f"0171 {rd(7)}", lambda: f"+49 (0)89 {rd(7)}", lambda: f"089/{rd(7)}"],
    "fr": [lambda: f"06 {rd(2)} {rd(2)} {rd(2)} {rd(2)}", lambda: f"+33 6 {rd(2)} {rd(2)} {rd(2)} {rd(2)}", lambda: f"01.{rd(2)}.{rd(2)}.{rd(2)}.{rd(2)}"],
    "es": [lambda: f"6{rd(2)} {rd(3)} {rd(3)}", lambda: f"+34 6{rd(2)} {rd(3)} {rd(3)}", lambda: f"91 {rd(3)} {rd(2)} {rd(2)}"],
    "it": [lambda: f"3{rd(2)} {rd(3)} {rd(4)}", lambda: f"+39 06 {rd(4)} {rd(4)}", lambda: f"02 {rd(4)} {rd(4)}"],
    "nl": [lambda: f"06 {rd(8)}", lambda: f"020 {rd(3)} {rd(4)}", lambda: f"+31 6 {rd(8)}", lambda: f"06-{rd(8)}"],
    "pl": [lambda: f"5{rd(2)} {rd(3)} {rd(3)}", lambda: f"+48 22 {rd(3)} {rd(2)} {rd(2)}", lambda: f"6{rd(2)}-{rd(3)}-{rd(3)}"],
    "pt": [lambda: f"9{rd(2)} {rd(3)} {rd(3)}", lambda: f"+351 21 {rd(3)} {rd(4)}", lambda: f"21 {rd(3)} {rd(4)}"],
    "en": [lambda: f"+44 20 {rd(4)} {rd(4)}", lambda: f"+1 415 {rd(3)} {rd(4)}", lambda: f"+49 151 {rd(8)}"],
}

def card():
    kind = R.randrange(3)
    if kind == 0:
        n = luhn_complete("4", 16)
        return R.choice([n, group4(n), "-".join(n[i:i + 4] for i in range(0, 16, 4))])
    if kind == 1:
        n = luhn_complete(str(R.randrange(51, 56)), 16)
        return R.choice([n, group4(n)])
    n = luhn_complete(R.choice(["34", "37"]), 15)
    return R.choice([n, f"{n[:4]} {n[4:10]} {n[10:]}"])

def ipv4():
    return ".".join(str(R.randrange(1, 255)) for _ in range(4))

def ipv6():
    groups = [f"{R.randrange(0, 65536):x}" for _ in range(R.choice([3, 4]))]
    return "2001:db8::" + ":".join(groups)

# ---- templates: (type, language) -> sentences with {v} ----

T = {
    "EMAIL": {
        "en": ["Please send the invoice to {v} by Friday.", "My email is {v}, reply there."],
        "de": ["Bitte schicken Sie die Rechnung an {v}.", "Meine E-Mail-Adresse lautet {v}."],
        "fr": ["Envoyez le contrat à {v} s'il vous plaît.", "Mon adresse e-mail : {v}"],
        "es": ["Escríbeme a {v} cuando puedas.", "Mi correo es {v}."],
        "it": ["Scrivimi a {v} per favore.", "La mia email è {v}."],
        "nl": ["Stuur de offerte naar {v}.", "Mijn e-mailadres is {v}."],
        "pl": ["Proszę wysłać fakturę na {v}.", "Mój adres e-mail to {v}."],
        "pt": ["Envie a fatura para {v}, obrigado.", "O meu email é {v}."],
    },
    "PHONE": {
        "en": ["Call me on {v} after six.", "You can reach support at {v}."],
        "de": ["Rufen Sie mich unter {v} an.", "Meine Telefonnummer ist {v}."],
        "fr": ["Appelez-moi au {v} demain.", "Mon numéro de téléphone : {v}"],
        "es": ["Llámame al {v} esta tarde.", "Mi teléfono es {v}."],
        "it": ["Chiamami al {v} domani.", "Il mio numero di telefono è {v}."],
        "nl": ["Bel me op {v} morgen.", "Mijn telefoonnummer is {v}."],
        "pl": ["Proszę zadzwonić pod {v}.", "Mój numer telefonu to {v}."],
        "pt": ["Ligue-me para o {v} amanhã.", "O meu telemóvel é {v}."],
    },
    "IBAN": {
        "en": ["Transfer the deposit to IBAN {v}.", "Our account: {v}."],
        "de": ["Bitte überweisen Sie auf {v}.", "Meine IBAN lautet {v}."],
        "fr": ["Mon IBAN est {v}.", "Virement sur le compte {v} svp."],
        "es": ["Mi IBAN es {v}.", "Haz la transferencia a {v}."],
        "it": ["Il mio IBAN è {v}.", "Bonifico sul conto {v}."],
        "nl": ["Mijn IBAN is {v}.", "Maak het over naar {v}."],
        "pl": ["Mój numer konta IBAN to {v}.", "Przelew na {v} proszę."],
        "pt": ["O meu IBAN é {v}.", "Transferência para {v}, por favor."],
    },
    "CARD": {
        "en": ["Charge card {v}, expiry 12/27.", "My credit card number is {v}."],
        "de": ["Meine Kreditkarte: {v}, gültig bis 08/26.", "Bitte belasten Sie {v}."],
        "fr": ["Ma carte bancaire est la {v}.", "Débitez la carte {v}."],
        "es": ["Mi tarjeta es {v}.", "Cobra en la tarjeta {v}."],
        "it": ["La mia carta di credito è {v}.", "Addebita sulla carta {v}."],
        "nl": ["Mijn creditcard is {v}.", "Schrijf af van kaart {v}."],
        "pl": ["Numer mojej karty to {v}.", "Obciąż kartę {v}."],
        "pt": ["O meu cartão é {v}.", "Cobre no cartão {v}."],
    },
    "IP": {
        "en": ["The login came from {v} at night.", "Block the address {v} in the firewall."],
        "de": ["Der Zugriff kam von {v}.", "Sperren Sie bitte {v}."],
        "fr": ["La connexion venait de {v}.", "Bloquez l'adresse {v}."],
        "es": ["El acceso vino de {v}.", "Bloquea la dirección {v}."],
        "it": ["L'accesso è arrivato da {v}.", "Blocca l'indirizzo {v}."],
        "nl": ["De login kwam van {v}.", "Blokkeer het adres {v}."],
        "pl": ["Logowanie z adresu {v}.", "Zablokuj adres {v}."],
        "pt": ["O acesso veio de {v}.", "Bloqueie o endereço {v}."],
    },
}

ID_TEMPLATES = {
    "DE_TAX_ID": ("de", ["Meine Steuer-ID ist {v}.", "Steueridentifikationsnummer: {v}", "IdNr {v} bitte eintragen."], steuer_id),
    "FR_NIR": ("fr", ["Mon numéro de sécurité sociale est {v}.", "NIR : {v}"], None),
    "ES_DNI": ("es", ["Mi DNI es {v}.", "Documento: {v}", "NIE {v} del solicitante."], None),
    "IT_CF": ("it", ["Il mio codice fiscale è {v}.", "CF: {v}"], cf),
    "NL_BSN": ("nl", ["Mijn BSN is {v}.", "Burgerservicenummer: {v}"], bsn),
    "PL_PESEL": ("pl", ["Mój PESEL to {v}.", "Numer PESEL: {v}"], pesel),
    "PT_NIF": ("pt", ["O meu NIF é {v}.", "Número de contribuinte: {v}"], nif),
}

NEAR = {
    "en": ["Order #{o} shipped on 12.03.2024.", "Invoice INV-2024-{s} totals 1,234.56 EUR.", "Upgrade to version 2.{a}.{b} first.", "The meeting is at 10:30:00 in room {a}.", "Tracking number {o}, ETA 3 days.", "Pi is roughly 3.14159265358979."],
    "de": ["Bestellnummer {o} vom 12.03.2024.", "Rechnung RE-2024-{s}, Betrag 1.234,56 EUR.", "Die PLZ ist 10115 Berlin, Hausnummer {a}.", "Kundennummer {o} bitte angeben.", "Version 3.{a}.{b} ist installiert.", "Termin am 05.06.2025 um 14:30 Uhr."],
    "fr": ["Commande n° {o} expédiée le 12/03/2024.", "Facture FA-2024-{s} : 1 234,56 EUR.", "Code postal 75008 Paris, bâtiment {a}.", "Référence client {o}.", "Rendez-vous le 05/06/2025 à 14h30."],
    "es": ["Pedido número {o} enviado.", "Factura F-2024-{s} por 1.234,56 EUR.", "Código postal 28013 Madrid, piso {a}.", "Referencia {o} del envío.", "La cita es el 05/06/2025 a las 14:30."],
    "it": ["Ordine numero {o} spedito.", "Fattura n. 2024/{s} di 1.234,56 EUR.", "CAP 00184 Roma, interno {a}.", "Codice cliente {o}.", "Appuntamento il 05/06/2025 alle 14:30."],
    "nl": ["Bestelnummer {o} is verzonden.", "Factuur 2024-{s} bedraagt 1.234,56 EUR.", "Postcode 1012 AB Amsterdam.", "Klantnummer {o}.", "Afspraak op 05-06-2025 om 14:30."],
    "pl": ["Zamówienie nr {o} zostało wysłane.", "Faktura FV/2024/{s} na 1 234,56 PLN.", "Kod pocztowy 00-950 Warszawa.", "Numer klienta {o}.", "Spotkanie 05.06.2025 o 14:30."],
    "pt": ["Encomenda número {o} enviada.", "Fatura FT 2024/{s} de 1.234,56 EUR.", "Código postal 1100-148 Lisboa.", "Referência do cliente {o}.", "Reunião em 05/06/2025 às 14:30."],
}

LANGS = ["en", "de", "fr", "es", "it", "nl", "pl", "pt"]
out = []

def add(lang, text, pii):
    out.append({"lang": lang, "text": text, "pii": pii})

for lang in LANGS:
    for kind, by_lang in T.items():
        for template in by_lang[lang]:
            for _ in range(3):
                if kind == "EMAIL":
                    v = email()
                elif kind == "PHONE":
                    v = R.choice(PHONES[lang])()
                elif kind == "IBAN":
                    c = R.choice([lang.upper() if lang.upper() in IBAN_LEN else "GB", "DE", "FR", "NL"])
                    v = iban(c)
                    v = R.choice([v, group4(v)])
                elif kind == "CARD":
                    v = card()
                else:
                    v = R.choice([ipv4, ipv6])()
                add(lang, template.format(v=v), [{"type": kind, "value": v}])
    # Two values in one message: the same and different types.
    for _ in range(3):
        e, p = email(), R.choice(PHONES[lang])()
        add(lang, T["EMAIL"][lang][0].format(v=e) + " " + T["PHONE"][lang][1].format(v=p),
            [{"type": "EMAIL", "value": e}, {"type": "PHONE", "value": p}])

for kind, (lang, templates, make) in ID_TEMPLATES.items():
    for template in templates:
        for _ in range(5):
            if kind == "FR_NIR":
                v = nir(R.random() < 0.5)
            elif kind == "ES_DNI":
                v = dni() if "NIE" not in template else nie()
            else:
                v = make()
            add(lang, template.format(v=v), [{"type": kind, "value": v}])
            # The same sentence with a wrong check digit: not PII.
            add(lang, template.format(v=wrong_last(v)), [])

# Near-misses: IBANs and cards with a wrong check digit, order numbers,
# dates, amounts, versions, postal codes.
for lang in LANGS:
    for template in NEAR[lang]:
        for _ in range(3):
            o = R.choice([rd(9), rd(11), rd(8), f"{rd(4)}-{rd(4)}", rd(16), rd(6)])
            add(lang, template.format(o=o, s=rd(5), a=R.randrange(1, 40), b=R.randrange(1, 40)), [])
    for _ in range(3):
        v = iban(R.choice(["DE", "FR", "NL", "ES"]))
        bad = v[:2] + f"{(int(v[2:4]) + 1) % 100:02d}" + v[4:]
        add(lang, T["IBAN"][lang][0].format(v=R.choice([bad, group4(bad)])), [])
        c = luhn_complete("4", 16)
        add(lang, T["CARD"][lang][1].format(v=group4(wrong_last(c))), [])
        add(lang, T["IP"][lang][0].format(v=f"{R.randrange(256, 999)}.{R.randrange(1, 255)}.1.1"), [])

for item in out:
    print(json.dumps(item, ensure_ascii=False))
