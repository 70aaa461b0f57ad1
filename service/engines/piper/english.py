"""English text written out where espeak-ng would misread it: money, clock times, phone numbers,
codes, dates, spans, fractions, versions and addresses, units, comparisons, and the
abbreviations whose period it takes for the end of a sentence. espeak reads plain numbers,
ordinals, percentages, temperatures and arithmetic well itself.

What espeak said without these rules: "$19.99" "dollar nineteen point nine nine", "9:00" "nine
zero zero", "555-123-4567" "five hundred fifty-five dash one hundred twenty-three dash ...",
"5kg" "five K G", "Dr. Jones" two sentences."""

from __future__ import annotations

import re
import unicodedata

from ..written import (
    ADDRESS,
    INTERNATIONAL_GROUPS,
    KEY_WORDS,
    PHONE,
    POWER,
    RATIO,
    REGNAL,
    ROMAN_AFTER_NAME,
    SUPERSCRIPTS,
    UNSAYABLE_FOUR,
    address_of,
    date_span,
    international_groups,
    one_of_a_count,
    ordinal_suffix,
    phone_groups,
    power_of,
    roman_value,
    spoken_stars,
    spoken_timestamps,
)

_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
_ABBREVIATED_MONTHS = {m[:3]: m for m in _MONTHS} | {"Sept": "September"}
_FRACTIONS = {2: ("half", "halves"), 3: ("third", "thirds"), 4: ("quarter", "quarters")} | {
    n: (name, name + "s")
    for n, name in enumerate(("fifth", "sixth", "seventh", "eighth", "ninth", "tenth"), start=5)
}
# A currency's sign or code: its unit and its hundredth, each one and many.
_CURRENCIES = {
    "$": ("dollar", "dollars", "cent", "cents"), "€": ("euro", "euros", "cent", "cents"),
    "£": ("pound", "pounds", "penny", "pence"), "¥": ("yen", "yen", "sen", "sen"),
    "₹": ("rupee", "rupees", "paisa", "paise"),
    "US$": ("US dollar", "US dollars", "cent", "cents"),
    "USD": ("US dollar", "US dollars", "cent", "cents"), "EUR": ("euro", "euros", "cent", "cents"),
    "GBP": ("pound", "pounds", "penny", "pence"), "JPY": ("yen", "yen", "sen", "sen"),
    "CNY": ("yuan", "yuan", "fen", "fen"), "RMB": ("yuan", "yuan", "fen", "fen"),
    "INR": ("rupee", "rupees", "paisa", "paise"),
}  # fmt: skip
_CODES = "USD|EUR|GBP|JPY|CNY|RMB|INR"
_SCALES = "thousand|million|billion|trillion"
# Written short after an amount: $5m, $2bn, $10k.
_SHORT_SCALES = {
    "k": "thousand", "K": "thousand", "m": "million", "M": "million", "bn": "billion",
    "B": "billion",
}  # fmt: skip
# Units after a number, which espeak spells ("5kg" as "five K G"): singular, plural.
_UNITS = {
    "km/h": ("kilometer per hour", "kilometers per hour"),
    "m/s": ("meter per second", "meters per second"),
    "mph": ("mile per hour", "miles per hour"),
    "mi": ("mile", "miles"),
    "km²": ("square kilometer", "square kilometers"),
    "km2": ("square kilometer", "square kilometers"),
    "m²": ("square meter", "square meters"),
    "m2": ("square meter", "square meters"),
    "m³": ("cubic meter", "cubic meters"),
    "m3": ("cubic meter", "cubic meters"),
    "km": ("kilometer", "kilometers"),
    "cm": ("centimeter", "centimeters"),
    "mm": ("millimeter", "millimeters"),
    "m": ("meter", "meters"),
    "kg": ("kilogram", "kilograms"),
    "mg": ("milligram", "milligrams"),
    "g": ("gram", "grams"),
    "ml": ("milliliter", "milliliters"),
    "mL": ("milliliter", "milliliters"),
    "L": ("liter", "liters"),
    "lb": ("pound", "pounds"),
    "lbs": ("pound", "pounds"),
    "oz": ("ounce", "ounces"),
    "tbsp": ("tablespoon", "tablespoons"),
    "tsp": ("teaspoon", "teaspoons"),
    "pts": ("point", "points"),
    "ft": ("foot", "feet"),
    "TB": ("terabyte", "terabytes"),
    "GB": ("gigabyte", "gigabytes"),
    "MB": ("megabyte", "megabytes"),
    "KB": ("kilobyte", "kilobytes"),
    "kB": ("kilobyte", "kilobytes"),
    "GHz": ("gigahertz", "gigahertz"),
    "MHz": ("megahertz", "megahertz"),
    "kHz": ("kilohertz", "kilohertz"),
    "Hz": ("hertz", "hertz"),
    "kW": ("kilowatt", "kilowatts"),
    "W": ("watt", "watts"),
    "V": ("volt", "volts"),
    "ms": ("millisecond", "milliseconds"),
    "sec": ("second", "seconds"),
    "secs": ("second", "seconds"),
    "min": ("minute", "minutes"),
    "mins": ("minute", "minutes"),
    "hr": ("hour", "hours"),
    "hrs": ("hour", "hours"),
    "h": ("hour", "hours"),
    "wk": ("week", "weeks"),
    "wks": ("week", "weeks"),
    "mo": ("month", "months"),
    "mos": ("month", "months"),
    "yr": ("year", "years"),
    "yrs": ("year", "years"),
    "bpm": ("beat per minute", "beats per minute"),
    "mAh": ("milliamp hour", "milliamp hours"),
    "kWh": ("kilowatt hour", "kilowatt hours"),
    "MB/s": ("megabyte per second", "megabytes per second"),
    "mg/kg": ("milligram per kilogram", "milligrams per kilogram"),
    "mg/mL": ("milligram per milliliter", "milligrams per milliliter"),
    "mg/dL": ("milligram per deciliter", "milligrams per deciliter"),
    "mcg": ("microgram", "micrograms"),
    "IU": ("international unit", "international units"),
    "fl oz": ("fluid ounce", "fluid ounces"),
    "sq ft": ("square foot", "square feet"),
    "sq. ft.": ("square foot", "square feet"),
    "GB/s": ("gigabyte per second", "gigabytes per second"),
    "Mbps": ("megabit per second", "megabits per second"),
    "Gbps": ("gigabit per second", "gigabits per second"),
    "°C": ("degree Celsius", "degrees Celsius"),
    "°F": ("degree Fahrenheit", "degrees Fahrenheit"),
    "‰": ("per mille", "per mille"),
}
# A one-letter unit right after its number, or after a space where a lowercase word or a mark
# follows it ("a 65 W charger"): "10 W 42nd St" is West. A short form's full stop inside a
# sentence ("30 min. or 2 hrs") goes with it: said after "minutes", it would end the sentence.
_ARTICLE_BEFORE = re.compile(r"(?<!\w)[Aa]n?\s+$")
_ONE_LETTER = "|".join(u for u in _UNITS if len(u) == 1)
_UNIT = re.compile(
    r"(?<![\w.])(\d+(?:[.,]\d+)*)(?:\s?("
    + "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True) if len(u) > 1)
    + rf")|({_ONE_LETTER})|\s({_ONE_LETTER})(?=\s+[a-z]|[,.;:!?)]|$))"
    + r"(?:\.(?=,|\s+[a-z]))?(?![\w/²³])"
)
# A plus after a count of things: "8+ characters", "2+ items", "10k+ users" (8 or more; espeak
# said "eight plus").
_OR_MORE = re.compile(r"(?<![\w.+])(\d[\d,]*(?:\.\d+)?(?: thousand| million)?)\+(?=\s[a-z]+s\b)")
# A temperature with no degree sign: a decimal ("37.5C", "98.6F") or one below zero ("-10F"),
# or a whole one after a word that says it is one ("Temp 38C", "a high of 72F", "bake at
# 350F"); espeak said the letter. A seat or a floor ("12F") is neither.
_BARE_DEGREES = re.compile(
    r"(?<![\w.])(-?\d{1,3}\.\d|-\d{1,3})([CF])\b"
    r"|\b((?i:temp|temperature|fever|high|low|heat|bake|roast|preheat|oven|thermostat)"
    r"(?:\s(?:of|is|was|at|to))?\s)(-?\d{1,3})([CF])\b"
)
# Comparisons and a tilde between numbers or letters (x > 3, 10%~20%): espeak drops them.
_SIGNS = {
    ">": "greater than", "<": "less than", "≥": "greater than or equal to",
    "≤": "less than or equal to", "~": "to", "\N{FULLWIDTH TILDE}": "to",
}  # fmt: skip
_SIGN = re.compile(r"(?<=[\w%])\s*([><≥≤~\N{FULLWIDTH TILDE}])\s*(?=[$€£]?\w)")
# A comparison or a tolerance before a figure with no word before it ("Response time: <2
# hours", ">10 items", "±0.5 mm", "≈3 km"): espeak drops those too.
_BEFORE_FIGURE = re.compile(r"(?:(?<![\w%])([><≥≤])|\s*([±≈]))\s*(?=[-$€£]?\.?\d)")
_FIGURE_SIGNS = {
    ">": "more than", "<": "less than", "≥": "at least", "≤": "at most", "±": "plus or minus",
    "≈": "about",
}  # fmt: skip
# An arrow beside a figure says which way it went ("Sales ↑12%": espeak says "up arrow"), and
# the period-over-period short forms of a report are said whole (espeak: "yo why").
_ARROW = re.compile(r"\s*(\N{UPWARDS ARROW}|\N{DOWNWARDS ARROW})\s*")
_ARROW_WORDS = {"\N{UPWARDS ARROW}": " up ", "\N{DOWNWARDS ARROW}": " down "}
_OVER = re.compile(r"\b(YoY|MoM|QoQ)\b")
_OVER_WORDS = {"YoY": "year over year", "MoM": "month over month", "QoQ": "quarter over quarter"}
# Short forms espeak reads letter by letter or as another word: "vs." ("V S"), "approx."
# ("approx" and a sentence's end), "w/" ("W slash"), "b/c" ("B slash C").
_SHORT_FORMS = re.compile(
    r"\b(?:(vs)\.|(approx)\.|(w/o)(?=\s)|(w/)(?=\s)|(incl)\.|(excl)\.|(dept)\.|(?<=[A-Z][a-z] )"
    r"(?:(Jr)|(Sr))\.(?=,|\s+[A-Za-z0-9])|(b/c)(?=[\s,.;:!?]|$)|(acct)\.?(?=\s)"
    r"|(qty)\.?(?=[\s:])|(msg)(?=\s)|(msgs)(?=\s)|(avg)\.?(?=[\s:]))",
    re.IGNORECASE,
)
_SHORT_FORM_WORDS = (
    "versus", "approximately", "without", "with", "including", "excluding", "department",
    "Junior", "Senior", "because", "account", "quantity", "message", "messages", "average",
)  # fmt: skip
# "Min. order $25", "Max. 2 per customer" (espeak: "min", and "max" with a sentence's end); but
# "min." after a number is minutes.
_MIN_MAX = re.compile(r"(?<!\d )(?<!\d)\b([Mm]in|[Mm]ax)\.\s(?=[a-z0-9$])")
# "N/A": the letters, not "N slash A".
_NOT_APPLICABLE = re.compile(r"(?<![\w/])N/A(?![\w/])")
# A menu path or steps: "Settings > Account > Security" (espeak: "greater than"), "Step 1 →
# Step 2" (espeak: "right arrow") are said with pauses.
_MENU_STEP = re.compile(
    r"(?<=[A-Za-z]{2})\s+>\s+(?=[A-Z])"
    r"|(?<=\w)\s+[\N{RIGHTWARDS ARROW}\N{RIGHTWARDS DOUBLE ARROW}]\s+(?=\w)"
)
# "10x faster", "2.5x": times ("2x4" is a size, left alone); "1.5M users": million.
_TIMES = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)x(?=[\s.,;:!?)]|$)(?!\s*[-+=<>\u2212])")
# A formula: a power (x², r³, 2^10: espeak says "x two", "two ten"), a minus after "="
# (espeak drops it: "x = -1" would be "x equals one"), π next to a letter ("πr²" pie-er).
_POWERS = {2: "squared", 3: "cubed"}
_EQUALS_MINUS = re.compile(r"(?<=[=<>])\s?-(?=\d)")
# In a text with "=", a spaced hyphen between terms is a minus ("y = 3x - 2"), not a dash.
_TERM_MINUS = re.compile(r"(?<=[\w)²³])\s-\s(?=[\w(])")
_PI = re.compile(r"π(?=[A-Za-z])|(?<=[A-Za-z\d])π")
# A hexadecimal number ("error 0x80070005"): its characters one by one, not a size (0 by …).
_HEX = re.compile(r"(?<![\w.])0x([0-9A-Fa-f]{2,})\b")
# "1920x1080", "4 x 6": a size, "by".
_BY = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?[x\u00d7]\s?(?=\d)")
# Initialisms espeak-ng reads as a word ("APR" appra, "OTP" ahtp, "PTO" toe, "ER" er, "USPS"
# usps; "SKU", "RMA" and "UPS" where no lowercase word follows them: "SKU 12345" skew), which
# people spell; the plural too ("VIPs"). Initialisms said as words (PIN, FAQ, NASA, SaaS) and
# those espeak-ng spells already (USB, ATM, API) are not listed.
_SPELLED = re.compile(
    r"\b(APR|APY|ETA|ETD|VIP|AWS|OTP|KYC|EOD|EOW|PTO|ROI|POS|IVR|DOB|EIN|ERP|COD|OOO|IST|AEST"
    r"|AKST|ACH|ABA|EHR|ER|ICU|OB|EKG|ECG|TOS|PII|OTC|ET|PT|CT|MT|AKA|USPS|RMA|SKU|QA|IRA|EMI"
    r"|UPS|HOA)(s?)\b"
)
_MILLION = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)M(?=[\s.,;:!?)+]|$)")
# "1.2k users", "10K followers": thousand before a plural ("a 5k run" stays "five K").
_THOUSAND = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[kK](?=\+?\s[a-z]+s\b)")
# A height in feet and inches: 6'2" (espeak: "six two").
_FEET = re.compile(r"(?<![\w'])(\d)'\s?(\d{1,2})(?:\"|''|\N{DOUBLE PRIME})")
# Emergency numbers are said digit by digit: "call 911" is nine one one.
# A phone number written as one run of digits ("5551234567", "+15551234567", as a form or a
# contact record gives it): its groups, not five billion and more. North American numbers
# only, whose area code cannot start with 0 or 1 (1400000000 stays a count), and not a round
# count (2000000000).
_BARE_PHONE = re.compile(
    r"(?<![\w.,$€£¥₹#/:+-])(\+?1)?([2-9]\d\d)(\d{3})(\d{4})(?<!0000)(?![\w%]|[.,:/-]\d)"
)
# Any other number in international form ("+447911123456"): the plus and its digits (in
# groups: written.INTERNATIONAL_GROUPS).
_INTERNATIONAL = re.compile(r"(?<![\w+])\+(\d{8,15})(?![\w%]|[.,]\d)")
# A text message's short code ("Text STOP to 55555", "text 55555"): its digits.
_SHORT_CODE = re.compile(r"(?i)\b(text(?:\s+[A-Z]+)?\s+to\s|text\s)(\d{4,6})\b(?![.,]\d)")
# A phone's star code ("dial *67", "*69"): star and its digits (espeak: asterisk sixty-seven).
_STAR_CODE = re.compile(r"(?i)\b((?:dial|press|enter)\s)\*(\d{2,3})\b")
# A run of digits too long to be an amount anyone says ("4111111111111111", a tracking number):
# its digits in fours, where espeak would say trillions or run out of names. A run of 12 to 15
# ending in four zeros (100000000000) is left as the amount it may be.
_LONG_DIGITS = re.compile(r"(?<![\w.,$€£¥₹])(?:\d{16,}|\d{12,15}(?<!0000))(?![\w%]|[.,]\d)")
# Groups of digits joined by hyphens that no span has: three groups or more (an order number,
# 112-3456789-0123456), and a local phone number after a word for calling ("call 555-1234").
_HYPHENED = re.compile(r"(?<![\w.,/-])\d+(?:-\d+){2,}(?![\w-]|\.\d)")
_LOCAL_PHONE = re.compile(
    r"(?i)(\b(?:call|dial|text|phone|fax|tel|number|line)\b[^\d.!?;]{0,12}?)"
    r"(?<![\w.,/-])([2-9]\d\d)-(\d{4})(?![\w-]|\.\d)"
)
# A duration in hours and minutes ("1h 30m", "2h30min"): m is minutes here, not meters.
_HOURS_MINUTES = re.compile(r"(?<![\w.])(\d+)\s?h\s?(\d{1,2})\s?m(?:in)?\b")
_EMERGENCY = re.compile(r"(?i)\b((?:call|dial|text|phone)\s)(911|999|112)\b")
# "v2.0", "Ver. 2", "Vol. 3", "No. 1": espeak says "vee two", "ver", "vol" and "no" and a
# sentence's end. (A small "no." before a figure may end an answer: "no. 5 of them".)
_NUMBERED = re.compile(r"\b(?:[Vv]er\.\s?|[Vv](?=\d+\.\d))(?=\d)|\b([Vv]ol|Nos|No)\.\s?(?=\d)")
_NUMBERED_WORDS = {"Vol": "volume ", "vol": "volume ", "No": "number ", "Nos": "numbers "}
# "close" as a verb ("please close the app"), which espeak says as the adjective (an s):
# before a word that starts its object, after a word that leads to a verb or at a sentence's
# start. "cloze" has the verb's sound.
_CLOSE_VERB = re.compile(
    r"(?i)(\b(?:to|please|will|can|you|and|then|just|not|'ll)\s|(?<![\w,'] )(?<![\w']))"
    r"(c)lose(?=\s(?:the|your|this|that|it|all|any|out|down|up)\b)"
)
# An address's short forms, after the street's name or before a number ("Oak Ave.", "Elm
# Rd.", "Apt. 4B", "Ste. 200"): espeak says "ah-vay", "R D", and "apt" with a sentence's end.
_STREET = {
    "Ave": "Avenue", "Rd": "Road", "Blvd": "Boulevard", "Ln": "Lane", "Hwy": "Highway",
    "Pkwy": "Parkway", "Ct": "Court", "Apt": "Apartment", "Ste": "Suite", "St": "Street",
    "Bldg": "Building", "Rm": "Room", "Fl": "Floor",
}  # fmt: skip
# St. after a street's name is Street ("221B Baker St., London"), before a name Saint.
_STREET_WORD = re.compile(
    r"(?<=[a-z] )(Ave|Rd|Blvd|Ln|Hwy|Pkwy|Ct|St(?!\.?\s+[A-Z]))\b(?:\.(?=,|\s+[a-z0-9]))?"
    r"|\b(Apt|Ste|Bldg|Rm|Fl)\.?(?=\s?#?\d)"
)
# A compass point between a house number and a street's name ("10 W 42nd St", "500 N Michigan
# Ave"): espeak says "double-u".
_POINTS = {"N": "North", "S": "South", "E": "East", "W": "West"}
_COMPASS = re.compile(r"(?<=\d )([NSEW])\.?(?= (?:\d+(?:st|nd|rd|th)|[A-Z][a-z]+) )")
# "Dr" after a street's name, with no name after it, is Drive ("Oak Dr., Apt. 5"; "Dr. Smith").
_DRIVE = re.compile(r"\b([A-Z][a-z]+ )Dr\b(?!\.?\s+[A-Z])(?:\.(?=,|\s+[a-z0-9]))?")
# A state's code before a ZIP code, after the city ("Springfield, IL 62704"): the state's
# name, the ZIP digit by digit (espeak: "ill", "sixty two thousand ...").
_STATES = dict(
    pair.split("=")
    for pair in (
        "AL=Alabama AK=Alaska AZ=Arizona AR=Arkansas CA=California CO=Colorado "
        "CT=Connecticut DE=Delaware DC=D C FL=Florida GA=Georgia HI=Hawaii ID=Idaho "
        "IL=Illinois IN=Indiana IA=Iowa KS=Kansas KY=Kentucky LA=Louisiana ME=Maine "
        "MD=Maryland MA=Massachusetts MI=Michigan MN=Minnesota MS=Mississippi MO=Missouri "
        "MT=Montana NE=Nebraska NV=Nevada NH=New_Hampshire NJ=New_Jersey NM=New_Mexico "
        "NY=New_York NC=North_Carolina ND=North_Dakota OH=Ohio OK=Oklahoma OR=Oregon "
        "PA=Pennsylvania RI=Rhode_Island SC=South_Carolina SD=South_Dakota TN=Tennessee "
        "TX=Texas UT=Utah VT=Vermont VA=Virginia WA=Washington WV=West_Virginia "
        "WI=Wisconsin WY=Wyoming"
    )
    .replace("D C", "D_C")
    .split()
)
_STATE_ZIP = re.compile(rf"(?<=, )({'|'.join(_STATES)}) (\d{{5}})(?:-(\d{{4}}))?\b")
# An e-mail or a web address: its digits one by one and its hyphens and underscores by name
# (espeak reads "163.com" as one hundred sixty-three, and leaves out the hyphen).
_ADDRESS_WORDS = {"-": " dash ", "_": " underscore "}
# A part of an address espeak reads as a word no one says (icbc "ikbk", xyz "zize"): three
# letters with no vowel (www aside, which it spells), four with three consonants in a row.
_UNSAID_PART = re.compile(
    rf"(?i)(?<![a-z])(?:(?!www)[b-df-hj-np-tv-z]{{3}}|{UNSAYABLE_FOUR})(?![a-z])"
)
# An underscore inside a handle or a user name ("@jane_doe99", "admin_01"), which espeak
# leaves out: the one who types it needs it. A phone number spelled with letters
# ("1-800-FLOWERS"): its hyphens are pauses, not "dash".
_UNDERSCORE = re.compile(r"(?<=[A-Za-z0-9])_(?=[A-Za-z0-9])")
_VANITY = re.compile(r"\b(1)-(8[0-8]{2})-(?=[A-Z]{4,}\b)")
# A day of the week shortened before a date ("Mon. 12/7", "Fri, Dec 5").
_DAY_DATE = re.compile(
    r"\b(Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)\b\.?"
    r"(?=,?\s(?:\d|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\b))"
)
# A short day name with its period ("Mon. through Fri.", "closed Sun."), or two with a slash
# ("Tue/Thu"): espeak says "mon", "fry", "sun".
_DAY_DOTTED = re.compile(r"\b(Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)\.(?=[\s,;)]|$)")
_BEFORE_A_DAY = frozenset(
    ("closed", "close", "closes", "open", "opens", "on", "until", "till", "through", "thru",
     "to", "and", "or", "every", "next", "this", "from", "by", "&")
)  # fmt: skip
_DAY_PAIR = re.compile(
    r"\b(Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)/(Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)\b"
)
# Weekdays in a span: Mon-Fri is Monday to Friday.
_DAYS = {
    "Mon": "Monday", "Tue": "Tuesday", "Tues": "Tuesday", "Wed": "Wednesday",
    "Thu": "Thursday", "Thur": "Thursday", "Thurs": "Thursday", "Fri": "Friday",
    "Sat": "Saturday", "Sun": "Sunday",
}  # fmt: skip
_DAY_NAMES = "|".join([*_DAYS, *sorted(set(_DAYS.values()))])
# "M-F" (with a hyphen or an en dash): the working week.
_WEEKDAYS = re.compile(r"\bM\s?[-\N{EN DASH}]\s?F\b")
# The period after a short name goes ("Mon.-Fri. 9-5"), not one that ends a sentence.
_DAY_SPAN = re.compile(
    rf"\b({_DAY_NAMES})\.?\s?[-\N{{EN DASH}}]\s?({_DAY_NAMES})\b(?:\.(?=\s?[a-z0-9]|[,;]))?"
)
# A span of clock times with AM or PM ("9am-5pm", "9:00 AM - 5:00 PM").
_TIME_SPAN = re.compile(r"(?<=\d)\s?([ap]\.?m\.?|[AP]\.?M\.?)\s?[-\N{EN DASH}]\s?(?=\d)")
# A span of hours before AM or PM ("2-3pm", "10:30-11:30 AM").
_HOUR = r"\d{1,2}(?::[0-5]\d)?"
_HOURS_SPAN = re.compile(
    rf"(?<![\w.:])({_HOUR})\s?[-\N{{EN DASH}}]\s?(?={_HOUR}\s?[apAP]\.?[mM]\b)"
)
# "9a-5p": a span of hours with the meridiem's letter alone (espeak: "nine A five P").
_LETTER_HOURS = re.compile(r"(?<![\w.:])(\d{1,2})([ap])\s?[-\N{EN DASH}]\s?(\d{1,2})([ap])\b")
# "Step 1/3", "Page 2/5": one of a count, not a fraction (one third, two fifths).
_OF_TOTAL = one_of_a_count(
    "step|page|question|part|item|slide|lesson|chapter|episode|round|level|stage|task|photo"
    "|image|track|day|week"
)
# "p. 12", "pp. 45-67": page and pages (espeak: "P P." and a sentence's end).
_PAGES = re.compile(r"(?<![\w.])(pp?)\.\s?(?=\d)")
# "Est." before a small word is "estimated" ("Est. delivery"), before a year "established"
# (espeak spells it as the time zone).
_EST = re.compile(r"\b([Ee])st\.\s(?:(?=[a-z])|(?=(?:1[6-9]|20)\d\d\b)())")
# A decade: espeak says "1990s" as "nineteen hundred ninety z". "the 1800s", "the 2010s";
# two digits only after an apostrophe or a word that makes them one ("the '90s", "in her
# 20s", "the late 80s"): "a timeout of 30s" is seconds.
_DECADE_WORDS = r"\b(?:the|her|his|their|my|your|our|mid|early|late|low|high|upper|lower) "
_DECADE = re.compile(
    r"(?<![\w.,])(1\d|20)([1-9]0|00)s\b"
    rf"|(['\N{{RIGHT SINGLE QUOTATION MARK}}]|{_DECADE_WORDS}|\bmid-)([1-9]0|00)s\b",
    re.IGNORECASE,
)
# What is left of a number with an s after it is seconds ("wait 5s", "a timeout of 30s":
# espeak said "thirty z"), or hundreds and thousands ("100s of users"); not a model's name
# (iPhone 5s).
_SECONDS = re.compile(
    r"(?<![\w.,$€£'\N{RIGHT SINGLE QUOTATION MARK}])(\d+(?:\.\d+)?)s\b"
    r"(?!['\N{RIGHT SINGLE QUOTATION MARK}])"
)
# ... and two of them joined ("30s-60s"): one span of seconds.
_SECONDS_SPAN = re.compile(r"(?<![\w.,$€£])(\d+)s\s?[-\N{EN DASH}]\s?(\d+)s\b")
# A time zone's offset ("UTC-5", "GMT+8"): espeak dropped the minus.
_OFFSET = re.compile(r"\b(UTC|GMT)\s?([+\-\u2212])\s?0?(\d{1,2})(?::00)?\b(?![:.]\d)")
# An HTTP status with a zero between ("Error 404", "a 503 error"): "four oh four", as said.
_STATUS = re.compile(
    r"(?i)\b((?:error|http|status)\s)([1-5])0([1-9])\b(?![.,]\d)"
    r"|\b([1-5])0([1-9])(?=\s(?:error|errors|page|status)\b)"
)
# A port's four digits in pairs ("port 8080": eighty eighty, not eight thousand eighty), three
# or five one by one ("port 443", "port 50051").
_PORT = re.compile(r"(?i)\b(port\s)(\d{3,5})\b(?![.,]\d)")
# A span of two decades ("highs in the 60s-70s", "Temps: 60s-70s"): espeak said "sixty z,
# seventy z". After a word that makes them decades, as one alone needs (30s-60s is seconds).
_DECADE_SPAN = re.compile(
    rf"({_DECADE_WORDS}|: |\bmid-)([1-9]0)s\s?[-\N{{EN DASH}}]\s?([1-9]0)s\b", re.IGNORECASE
)
_TENS = {
    "1": "ten", "2": "twenty", "3": "thirty", "4": "forty", "5": "fifty", "6": "sixty",
    "7": "seventy", "8": "eighty", "9": "ninety",
}  # fmt: skip
_TEENS = (
    "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
    "eighteen", "nineteen",
)  # fmt: skip
# A hyphen between two amounts or percentages, each with its sign ("$100-$200", "10%-20%",
# "20°C-25°C"): a span (espeak: a dash, or nothing).
_SIGNED_SPAN = re.compile(
    r"(?:(?<=\d%)|(?<=\d°[CF]))\s?[-\N{EN DASH}]\s?(?=\d)|(?<=\d)\s?[-\N{EN DASH}]\s?(?=[$€£¥₹]\d)"
)
# "$5-10": the sign on both ends.
_NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_MONEY_SPAN = re.compile(
    rf"([$€£¥₹])({_NUMBER})\s?[-\N{{EN DASH}}]\s?(?={_NUMBER}(?![\d-]|[.,]\d))"
)
# "4.5/5": a rating; so is a whole one out of 5, 10 or 100 that says it is ("rated 9/10",
# "4/5 stars", "10/10"), which would otherwise be a fraction ("four fifths stars").
_RATING = re.compile(r"(?<![\w/.])(\d+\.\d+|\d{1,3})/(\d+)(?![\w/]|\.\d)")


def _cue_before(words: str) -> re.Pattern[str]:
    """One of `words` shortly before a number, in the same sentence."""
    return re.compile(rf"(?i)\b(?:{words})\b[^.!?;\d]{{0,20}}$")


_RATED_BEFORE = _cue_before(
    r"rat(?:e|es|ed|ing)|scor(?:e|es|ed|ing)|gives?|gave|reviewed|review|grade[ds]?"
)
_RATED_AFTER = re.compile(r"(?i)\s?(?:stars?|rating|overall)\b")
# Out of ten or a hundred before whom or what is counted ("9/10 dentists", "8/10 times"); a
# measure after it is a fraction of one ("9/10 miles": the units' names, and a few more).
_COUNTED_AFTER = re.compile(r"\s([a-z]{3,}s)\b")
_MEASURES = {plural: one for one, plural in _UNITS.values() if " " not in plural} | {
    "cups": "cup", "inches": "inch", "days": "day", "yards": "yard", "acres": "acre",
    "gallons": "gallon", "metres": "metre", "litres": "litre",
}  # fmt: skip
# A tilde before a number, after no word: about (~5%).
_ABOUT = re.compile(r"(?<![\w%])~\s?(?=[$€£]?\d)")
# A sharp: C# and F# (the language, the note); espeak says "C hash".
_SHARP = re.compile(r"\b([A-G])#(?!\w)")

# "$19.99", "$1,299", "€5", "$0.50", "$5 million".
# ... and "USD 100", "100 USD", "US$20", "$20 USD" and "$5 dollars" (the unit once).
_AMOUNT = r"(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?"
_MONEY = re.compile(
    rf"(US\$|[$€£¥₹]|\b(?:{_CODES})\s)\s?{_AMOUNT}"
    rf"(?:\s?({_SCALES})\b|({'|'.join(_SHORT_SCALES)})\b)?(?![\d.,]\d)"
    rf"(?:\s(?:{_CODES}|(?i:dollars?|euros?|pounds?|yen|rupees?))\b)?"
)
_MONEY_AFTER = re.compile(rf"(?<![\w.,]){_AMOUNT}\s?\b({_CODES})\b")
# A price written the European way in English text ("€1.234,56"): points between thousands, a
# comma before the cents, made the form the rule above reads (which would say "1 euro and 23
# cents 4,56").
_EUROPEAN_PRICE = re.compile(r"(?<=[€£$])\s?(\d{1,3}(?:\.\d{3})+),(\d{2})(?![\d,.]\d)")
# Degrees and titles written with points ("Ph.D.", "M.D."): espeak says "P H dot D dot".
_DOTTED_LETTERS = re.compile(
    r"\b(Ph\.D|M\.D|B\.A|M\.A|B\.S|M\.S|J\.D|D\.D\.S|M\.B\.A|R\.N)\.(?:(?=,|\s+[a-z])|(?=\s|$))"
)
# "9:30", "5:05 pm", "10:15 a.m."; not "3:2" (a score) or "12:30:15" (read as it is).
# Two of them joined by a dash or an en dash ("9:00-17:00", "9:30-11:00").
_CLOCK_SPAN = re.compile(
    r"(?<![\d:])((?:[01]?\d|2[0-3]):[0-5]\d)\s?[-\N{EN DASH}~]\s?((?:[01]?\d|2[0-3]):[0-5]\d)"
    r"(?![\d:]|\s?(?:[ap]\.?m\b|[AP]\.?M\b))"
)
_TIME = re.compile(
    r"(?<![\d:])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])"
    r"(\s?(?:[ap]\.m\.|[AP]\.M\.|(?:[ap]m|[AP]M)\b)|[ap]\b(?!['\u2019]))?"
)
# A number after a word that introduces a code is read digit by digit ("your code is 385912").
_CODE = re.compile(
    r"(?i)\b((?:code|pin|otp|passcode|password|extension|ext\.|id|(?:order|account|confirmation|"
    r"reference|tracking|case|ticket|member|policy|card|serial|flight|room)\s(?:number|no\.|#)|"
    r"number|no\.|(?:ending|ends)\s(?:in|with)|(?:card|account|acct|phone)\s(?:ending|ends)|"
    r"last\s(?:4|four)(?:\sdigits)?)"
    r"(?:\sis|\sare|:)?\s?)"
    r"((?:#|\.{2,}|\N{HORIZONTAL ELLIPSIS})?\d{3,}(?:[ -]\d{3,})*)"
    r"(?![\d.,]\d|\d)"
)
# A number to key in with no name before it: one of six digits or more, or with a leading zero,
# after "enter" or "type" ("Enter 482913 to continue"), and a short number to dial ("dial 911").
# Longer numbers to dial are phone numbers (_digit_runs); "Enter 1000" stays an amount.
_KEYED = re.compile(
    r"(?i)\b((?:enter|type|key\sin|dial)\s)((?<=ial\s)\d{3,6}|(?<!ial\s)(?:\d{6,}|0\d{3,}))"
    r"(?![\d.,]\d|\d)"
)
# A room's four-digit number is said in pairs ("Room 1208" twelve oh eight), not as a count
# (one thousand two hundred eight); espeak says three digits as people may (three hundred two).
_ROOM_NUMBER = r"\b((?:[Rr]oom|ROOM)(?: number| no\.)?(?: is|:)? #?)([1-9]\d{3})\b(?![.,]\d)"
_ROOM = re.compile(_ROOM_NUMBER)
# "No." before a code is "number" (espeak says "no").
_NO = re.compile(r"\b[Nn]o\.")
# "Your tracking # is 1Z999…": a number sign standing alone is "number", not "hash".
_LONE_NUMBER_SIGN = re.compile(r"(?<=\w )#(?= (?:is|was)\b|:)")
# "#12345": a number sign before digits is "number".
_NUMBER_SIGN = re.compile(r"(?<![\w&])#(\d+)\b")
# "#A1B2C3": a number sign before a code of letters and digits.
_CODE_SIGN = re.compile(r"(?<![\w&])#(?=[A-Za-z0-9-]*\d[A-Za-z0-9]*\b)")
# A hashtag: a word with a small letter, or in capitals with no digit ("#summer2026", "#TBT");
# espeak said "hash", and a digit in it made it a code ("number summer 2026").
_HASHTAG = re.compile(
    r"(?<![\w&#])#(?=[A-Za-z])((?=[A-Za-z0-9_]*[a-z])[A-Za-z0-9_]+|[A-Z]+\b(?![-\d]))"
)
# The letter A inside a sentence ("option A", "Press A", "zone A 12") or after an ampersand
# ("Q&A session"), which espeak reads as the article "uh"; "Eigh" is its name to espeak.
_LETTER_A = re.compile(r"(?:(?<=[a-z0-9,] )|(?<=[A-Z]&))A\b(?!['\u2019-])")
# A span of days after a month's name ("March 3-5"): third to fifth, not "third five".
_NAMED_MONTH_SPAN = re.compile(
    rf"\b({'|'.join(_MONTHS)})\s(0?[1-9]|[12]\d|3[01])\s?[-\N{{EN DASH}}]\s?"
    r"(0?[1-9]|[12]\d|3[01])\b(?![\d:%]|[.,]\d)"
)
# A month's name before a day's number: espeak says "January 14" as "January fourteen".
_MONTH_NAMED_DAY = re.compile(
    rf"\b({'|'.join(_MONTHS)})\s(0?[1-9]|[12]\d|3[01])\b(?!st|nd|rd|th|[\d:%]|[.,]\d)"
)
# A number masked but for its last digits ("***-***-4821", "card ****1234"): those digits.
# (It starts only where a run of marks starts, and each run after the first starts with its
# separator: a long run of marks with no digits after it costs one linear scan.)
_MASK = "*\N{BULLET}"
_MASKED = re.compile(rf"(?<![{_MASK}])[{_MASK}]{{2,}}(?:[-\s.][{_MASK}]+)*[-\s.]?(\d{{2,}})\b")
# Short names of spans of time, after a slash ("$1,500/yr") or before a noun ("24-hr").
_TIME_WORDS = {
    "hr": "hour", "min": "minute", "sec": "second", "yr": "year", "mo": "month", "wk": "week",
}  # fmt: skip
# A word after an amount and a slash ("$1,500/yr", "$25/visit", "4g/day", "10%/year"): per
# it. Not a unit's one letter (km/h, m/s: the units' own names) nor a web address's path.
_PER = re.compile(
    r"(\d[A-Za-z]{0,3}|%|dollars|euros|pounds|cents|yen)\s?/\s?([a-z]{2,})\b(?!/|\.\w)"
)
# A span of time as a word before a noun ("a 24-hr line", "a 5-min wait"): the unit's name.
_TIME_ADJECTIVE = re.compile(rf"(?<=\d)-({'|'.join(_TIME_WORDS)})\b")
# A US retirement plan: 401(k) is "four oh one K" (espeak: "four hundred one").
_PLAN = re.compile(r"\b(4)0(1|3)\((k|b)\)")
# The keys of a phone's keypad, as a phone menu names them: "press * then #".
_KEYS = re.compile(r"(?i)\b(press|dial|hit|tap|then|or)\s([*#])(?=[\s,.;!?]|$)")
# A phone extension, however short: "ext. 89" (espeak: "ekst eighty-nine"), or an x after a
# phone number's last four digits ("555-0100 x123", which espeak read as "by 123").
_EXTENSION = re.compile(r"(?i)\b(?:ext\.?|extension)\s?(\d{1,6})\b|(?<=\d{4})\s+x(\d{1,6})\b")
# Blood pressure: "120/80" is "120 over 80".
_PRESSURE = re.compile(r"(?i)\b(blood pressure|BP)(\D{0,20}?)(\d{2,3})/(\d{2,3})\b")
# A run of three or more numbers with slashes that is no date ("24/7/365"): one after another.
_SLASHES = re.compile(r"(?<![\w/.])(?:1[3-9]|[2-9]\d|\d{3,})(?:/\d+){2,}(?![\w/]|\.\d)")
# A month and a day with a slash and no year, after a word that asks for a date ("on 12/05",
# "Tuesday, 12/8", "due 1/15", "reply by 6/1", "as of 12/05", "valid through 6/30"): the date.
# Not after "from", nor a fraction after "by": "cut by 1/3".
_DAY_WORDS = "|".join(
    ("on", "until", "till", "before", "after", "since", "due", "by", "as of", "effective",
     "through", "thru", "expires", "expiring", "ends", "ending", "starts", "starting", "begins",
     "ships", "arrives")
)  # fmt: skip
_MONTH_DAY = re.compile(
    rf"(?i)\b((?:{_DAY_WORDS}|\w+day,?)\s)(0?[1-9]|1[0-2])/(0?[1-9]|[12]\d|3[01])(?![\d/]|\.\d)"
)
# Two of them as a span ("12/1-12/31", "3/5 to 3/10"): the dates, where the second is the later
# and the two are not small fractions rising ("1/3-1/2" is a third to a half).
_MD = r"(0?[1-9]|1[0-2])/(0?[1-9]|[12]\d|3[01])"
_MONTH_DAY_SPAN = re.compile(
    rf"(?<![\w/.]){_MD}\s?(?:[-\N{{EN DASH}}]|\s(?:to|through|thru|until)\s)\s?{_MD}(?![\d/]|\.\d)"
)
# Alone, a day past the 12th in a month after January ("closed 12/24 and 12/25", "through 3/15"):
# no one writes that as a fraction, except of a measure (3/16 of an inch, 5/16").
_BARE_MONTH_DAY = re.compile(
    r"(?<![\w/.$])(0?[2-9]|1[0-2])/(1[3-9]|2\d|3[01])(?![\d/]|\.\d|\s?(?:\"|of\b|inch|cup|tsp|"
    r"tbsp|teaspoon|tablespoon|mile|scale|odds|chance))"
)
# Digits right after capital letters: a flight, a model, a reference (CA1234, AB12345).
# Groups after it are the code's too (CS-2024-0042), not a span. Two or three letters before
# them are spelled one by one: espeak read CA, OR, IN, AM and PA as words ("ka", "or").
_AFTER_LETTERS = re.compile(r"(?:(?<![A-Za-z])([A-Z]{2,3})|(?<=[A-Z]))-?(\d{3,}(?:-\d+)*)\b(?!-\d)")
# A date: 12/05/2026 (month first, as in the US), 2026-12-05.
_US_DATE = re.compile(r"(?<![\d/])(0?[1-9]|1[0-2])/(0?[1-9]|[12]\d|3[01])/(\d{4})(?![\d/])")
# ... and year first with slashes, as Chinese and Japanese write it: 2026/12/06.
_YMD_DATE = re.compile(r"(?<![\d/])(\d{4})/(0?[1-9]|1[0-2])/(0?[1-9]|[12]\d|3[01])(?![\d/])")
# A whole number and a fraction (1 1/2 cups): "1 and one half".
_MIXED = re.compile(r"(?<![\w/.])(\d+) (?=\d{1,2}/\d{1,2}(?![\w/]|\.\d))")
_ISO_DATE = re.compile(r"(?<![\d-])(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?![\d-])")
_MONTH_ABBREVIATION = re.compile(
    r"\b(" + "|".join(_ABBREVIATED_MONTHS) + r")\.?(?=\s\d{1,2}(?:st|nd|rd|th)?\b|\s\d{4}\b)"
)
# A video's lines, said in pairs: 1080p ten eighty p, 720p seven twenty p.
_VIDEO_LINES = re.compile(r"(?<![\w.])(480|576|720|1080|1440|2160|4320)([pi])\b")
# A day before its month, as Britain writes it ("5 December 2026", "21 Jun."): the 5th of
# December (espeak said "five December", "five Dec"). A full stop stays where it ends a sentence.
_DAY_MONTH = re.compile(
    r"(?<![\d.,:/])(the )?(0?[1-9]|[12]\d|3[01]) ("
    + "|".join(sorted({*_MONTHS, *_ABBREVIATED_MONTHS}, key=len, reverse=True))
    + r")\b(?:\.(?=,|\s+[a-z\d]))?(?!['\u2019])"
)
# A mountain's, a fort's or a route's short form ("Mt. Hood", "Ft Worth", "Rte. 66"), and a
# post office box ("P.O. Box 77"): espeak spells them, and ends a sentence at their periods.
_PLACE = re.compile(r"\b(?:(Mt|Ft)\.?(?=\s[A-Z][a-z])|(Rte?)\.?\s?(?=\d)|(P\.\s?O)\.?(?=\s+Box\b))")
# Brands espeak reads by English spelling rules, far from their names as said: Huawei
# "hyoo-away", Xiaomi "zye-oh-mee", Baidu "bay-doo", Temu "temm-oo", Hermès "hermz".
_BRAND_NAMES = {
    "Huawei": "Wahway", "HUAWEI": "Wahway", "Xiaomi": "Shao-mee", "Baidu": "Bye-doo",
    "Temu": "Teemoo", "Hermès": "Air-mez", "Hermes": "Air-mez", "Shein": "Sheein",
    "SHEIN": "Sheein",
}  # fmt: skip
_BRAND = re.compile(rf"\b(?:{'|'.join(_BRAND_NAMES)})\b(?!\.\w)")
_PLACE_WORDS = {"Mt": "Mount", "Ft": "Fort", "Rt": "Route ", "Rte": "Route "}
# Keys espeak spells ("see em dee", "pee gee up") where a key is named.
# A road's number of three digits is said in pairs: I-405 four oh five, US 101 one oh one,
# I-280 two eighty (espeak said "four zero five" and "two hundred eighty").
_ROAD = re.compile(
    r"\b(I-|US-|SR[- ]|(?:Interstate|Highway|Route) |Hwy\.? ?)([1-9]\d{0,2})\b(?![.,]\d|%)"
)
_ROAD_NAMES = {"I": "I", "US": "US", "SR": "State Route", "Hwy": _STREET["Hwy"]}
# A wind's direction by its initials ("winds NW 10-15 mph"): espeak spelled them.
_WIND = re.compile(
    r"(?i:\b(winds?|breeze|gusts?)\s(?:from\s(?:the\s)?)?)"
    r"([NSEW]|[NS][EW]|NN[EW]|SS[EW]|E[NS]E|W[NS]W)\b"
)
# A flight's number apart from its airline's code: "Flight UA 1234" twelve thirty-four (joined,
# CA1234 is a code: _AFTER_LETTERS).
_FLIGHT = re.compile(r"\b([Ff]light\s(?:[A-Z][A-Z\d]\s)?)(\d{3,4})\b(?![.,]\d)")
_KEY_NAMES = re.compile(r"\b(?:(Cmd|Opt)(?=\s?\+)|(?<=\+)(Cmd|Opt)\b|(PgUp|PgDn)\b)")
# A title before a name: espeak reads "Dr." as a word and then ends the sentence at its period.
_TITLES = re.compile(r"\b(Mr|Mrs|Ms|Dr|Prof|St)\.(?=\s[A-Z])")
# "3-5 days", "10\N{EN DASH}20": a span (a score reads the same way: "won 3-2" is "three to two").
_SPAN = re.compile(r"(?<![\w.,/-])(\d+(?:\.\d+)?)\s?[-\N{EN DASH}]\s?(\d+(?:\.\d+)?)(?![\w-]|\.\d)")
# A game's words before two numbers make them a score, however large ("won 112-108").
_SCORE_BEFORE = _cue_before(
    r"scores?|scored|won|wins?|lost|loses?|beat|beats|defeated|final|game|match|"
    r"leads?|led|trails?|trailed"
)
# A date's written pattern ("MM/DD/YYYY", "yyyy-mm-dd"), read letter by letter as a caller must
# type it; espeak said "mm" as M M but "yyyy" as a noise.
_DATE_PATTERN = re.compile(
    r"(?i)(?<![\w/.-])(?:mm|dd|yy(?:yy)?)([/.-])(?:mm|dd)\1(?:mm|dd|yy(?:yy)?)(?![\w/-])"
)
_PATTERN_SEPARATORS = {"/": " slash ", "-": " dash ", ".": " dot "}
# A tax form's four digits in pairs, as said ("Form 1099": ten ninety-nine, not one thousand).
_FORM = re.compile(r"\b(Form|form|Forms|forms)\s([1-9]\d)(\d\d)\b(?![.,]\d)")
_CODE_LABEL = re.compile(r"\b[A-Z]{2,}\s?#?\s?$")
# "1/2", "3/4", "2/3": small fractions by their names, and over 12 with an ordinal (1/20 one
# twentieth); other pairs of small numbers are said one after the other ("24/7", "50/50").
_FRACTION = re.compile(r"(?<![\w/.])(\d{1,2})/(\d{1,2})(?![\w/]|\.\d)")
# A dash between two of them is a span: "1/3-1/2" is a third to a half.
_FRACTION_SPAN = re.compile(
    r"(?<![\w/.])(\d{1,2}/\d{1,2})\s?[-\N{EN DASH}]\s?(?=\d{1,2}/\d{1,2}(?![\w/]|\.\d))"
)
# A fraction before a unit's short name or a measure's plural: espeak spelled "1/2 tsp" T S P,
# and "9/10 miles" is nine tenths of a mile. Units of one letter are left to _UNIT.
_FRACTION_MEASURE = re.compile(
    r"(?<![\w/.])(\d{1,2})/(\d{1,2})(?:\s?("
    + "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True) if len(u) > 1)
    + r")(?:\.(?=,|\s+[a-z]))?(?![\w/²³])|\s("
    + "|".join(sorted(_MEASURES, key=len, reverse=True))
    + r")\b)"
)
_AND_BEFORE = re.compile(r"\d and $")
# An address or a version: four numbers to 255 are an IP address, read digit by digit with
# "dot"; other runs of three or more a version ("10.15.7": ten point fifteen point seven).
_DOTTED = re.compile(r"(?<![\w.])\d+(?:\.\d+){2,}(?![\w]|\.\d)")


def _spaced(digits: str) -> str:
    return " ".join(digits)


def _in_groups(digits: str, size: int) -> str:
    """Digits one by one in groups of `size`, a pause between; a last digit alone joins the
    group before it."""
    groups = [digits[i : i + size] for i in range(0, len(digits), size)]
    if len(groups) > 1 and len(groups[-1]) == 1:
        groups[-2:] = [groups[-2] + groups[-1]]
    return ", ".join(map(_spaced, groups))


def _money(match: re.Match[str]) -> str:
    sign, whole, cents, scale, short = match.groups()
    return _amount(sign.strip(), whole, cents, scale or _SHORT_SCALES.get(short or ""))


def _amount(sign: str, whole: str, cents: str | None, scale: str | None = None) -> str:
    one, many, small_one, small_many = _CURRENCIES[sign]
    whole_value = int(whole.replace(",", ""))
    if scale:
        return f"{whole}{'.' + cents if cents else ''} {scale} {many}"
    cents_value = int((cents or "0").ljust(2, "0"))
    small_words = f"{cents_value} {small_one if cents_value == 1 else small_many}"
    if whole_value == 0 and cents_value:
        return small_words
    said = f"{whole} {one if whole_value == 1 else many}"
    return f"{said} and {small_words}" if cents_value else said


def _dotted_letters(match: re.Match[str]) -> str:
    """Its letters spelled; its last point kept where it ends the sentence."""
    letters = " ".join(c for c in match.group(1) if c.isalpha()).upper()
    end = match.string[match.end() : match.end() + 3]
    return letters if end[:1] == "," or end.lstrip()[:1].islower() else letters + "."


def _power(match: re.Match[str]) -> str:
    power = power_of(match)
    if match.group(1) and power in _POWERS:  # x² squared; 2^2 to the power of 2
        return " " + _POWERS[power]
    return f" to the power of {power}"


def _code(match: re.Match[str]) -> str:
    digits = match.group(2).lstrip("#.\N{HORIZONTAL ELLIPSIS}")  # "#4821", "...4821"
    groups = ", ".join(_spaced(group) for group in re.split(r"[ -]", digits))  # "482 913"
    return _NO.sub("number", match.group(1)) + groups


def _month_day_span(match: re.Match[str]) -> str:
    m1, d1, m2, d2 = (int(g) for g in match.groups())
    if not date_span(m1, d1, m2, d2):
        return match.group(0)
    return f"{_MONTHS[m1 - 1]} {_ordinal(d1)} to {_MONTHS[m2 - 1]} {_ordinal(d2)}"


def _letter_by_letter(letters: str) -> str:
    # A by its name, which espeak-ng would read as the article "uh".
    return " ".join("Eigh" if c == "A" else c for c in letters)


def _date_pattern(match: re.Match[str]) -> str:
    parts = re.split(r"[/.-]", match.group(0).upper())
    return _PATTERN_SEPARATORS[match.group(1)].join(map(_letter_by_letter, parts))


def _spelled(match: re.Match[str]) -> str:
    letters = _letter_by_letter(match.group(1))
    return f"{letters}'s" if match.group(2) else letters


def _web_address(match: re.Match[str]) -> str:
    address = _UNSAID_PART.sub(lambda m: _letter_by_letter(m.group(0).upper()), address_of(match))
    if not any(c.isdigit() or c in _ADDRESS_WORDS for c in address):
        return address
    said = re.sub(r"\d+", lambda m: f" {_spaced(m.group(0))} ", address)
    return "".join(_ADDRESS_WORDS.get(c, c) for c in said).replace("  ", " ").strip()


def _state_zip(match: re.Match[str]) -> str:
    state, code, more = match.groups()
    said = f"{_STATES[state].replace('_', ' ')} {_spaced(code)}"
    return f"{said} {_spaced(more)}" if more else said


def _after_decades(text: str) -> str:
    """Seconds (5s), an HTTP status (404), a time zone's offset (UTC-5) and a port (8080),
    once decades are words."""
    if "s" in text:
        text = _SECONDS.sub(_seconds, _SECONDS_SPAN.sub(r"\1 to \2 seconds", text))
    text = _STATUS.sub(lambda m: f"{m[1] or ''}{m[2] or m[4]} oh {m[3] or m[5]}", text)
    text = _OFFSET.sub(lambda m: f"{m[1]} {'plus' if m[2] == '+' else 'minus'} {m[3]}", text)
    return _PORT.sub(lambda m: m[1] + (_in_pairs if len(m[2]) == 4 else _spaced)(m[2]), text)


def _seconds(match: re.Match[str]) -> str:
    number, before = match[1], match.string[: match.start()]
    if before.endswith("iPhone ") or re.search(r"\ds,? (?:and|or) $", before):
        return match[0]
    if re.match(r",? (?:and|or) \d+s\b", match.string[match.end() :]):
        return match[0]  # "5s and 6s": the numbers, more than one
    if number in ("100", "1000"):
        return "hundreds" if number == "100" else "thousands"
    return f"{number} second" + ("" if number == "1" else "s")


def _decade_span(match: re.Match[str]) -> str:
    first, last = (_TENS[tens[0]][:-1] + "ies" for tens in match.group(2, 3))
    return f"{match[1]}{first} to {last}"


def _decade(match: re.Match[str]) -> str:
    century, tens, before = match.group(1), match.group(2) or match.group(4), match.group(3)
    if century is None:
        before = "" if before in ("'", "\N{RIGHT SINGLE QUOTATION MARK}") else before
        return before + ("two thousands" if tens == "00" else _TENS[tens[0]][:-1] + "ies")
    said = "twenty" if century == "20" else _TEENS[int(century) - 10]
    if tens == "00":
        return "two thousands" if century == "20" else said + " hundreds"
    decade = "tens" if tens == "10" else _TENS[tens[0]][:-1] + "ies"
    return f"{said} {decade}"


def _day(written: str) -> str:
    return _DAYS.get(written, written)


def _clock_span(match: re.Match[str]) -> str:
    """Two clock times joined by a dash: "9:00-17:00" is 9 AM to 5 PM (a 24-hour span gives
    both ends their half of the day), "9:30-11:00" 9 30 to 11."""
    (h1, m1), (h2, m2) = match.group(1).split(":"), match.group(2).split(":")
    if max(int(h1), int(h2)) > 12 or 0 in (int(h1), int(h2)):
        return f"{_clock(*_twelve(h1), m1)} to {_clock(*_twelve(h2), m2)}"
    return f"{_clock(h1, None, m1, bare=True)} to {_clock(h2, None, m2, bare=True)}"


def _twelve(hours: str) -> tuple[str, str]:
    """A 24-hour clock's hour as a 12-hour one and its half of the day."""
    return str(int(hours) % 12 or 12), " PM" if int(hours) >= 12 else " AM"


def _time(match: re.Match[str]) -> str:
    return _clock(match.group(1), match.group(3), match.group(2))


def _clock(hours: str, meridiem: str | None, minutes: str, bare: bool = False) -> str:
    if not meridiem and (int(hours) > 12 or int(hours) == 0):
        # A 24-hour time as an English speaker says it: 17:30 is 5 30 PM, 00:15 12 15 AM.
        meridiem = " PM" if int(hours) > 12 else " AM"
        hours = str(int(hours) - 12 if int(hours) > 12 else 12)
    said = str(int(hours))
    if minutes == "00":
        said += "" if meridiem or bare else " o'clock"
    elif minutes[0] == "0":
        said += f" oh {minutes[1]}"
    else:
        said += f" {minutes}"
    if meridiem:
        meridiem = meridiem.strip().replace(".", "").upper()
        said += " " + (meridiem + "M" if len(meridiem) == 1 else meridiem)  # 2:15p: 2 15 PM
    return said


def _phone(match: re.Match[str]) -> str:
    """A phone number's groups digit by digit, a pause between them; a span as it is."""
    groups = phone_groups(match)
    if groups is None:
        return match.group(0)
    return ("plus " if match.group(0).startswith("+") else "") + ", ".join(map(_spaced, groups))


def _date(month: str, day: str, year: str) -> str:
    return f"{_MONTHS[int(month) - 1]} {_ordinal(int(day))}, {year}"


def _span(match: re.Match[str]) -> str:
    """Two numbers joined by a hyphen: a span ("3-5 days", a score "3-2"), unless no span is
    written so: a group with a leading zero (INV 2024-0042) or a long first number not below
    the second (RMA 2024-1187), which are codes read digit by digit."""
    first, second = match.group(1), match.group(2)
    whole = "." not in first + second
    before = match.string[max(0, match.start() - 40) : match.start()]
    scored = _SCORE_BEFORE.search(before) and not _CODE_LABEL.search(before)
    if (
        whole
        and not scored
        and (
            (len(second) > 1 and second[0] == "0")
            or (len(first) >= 3 and len(second) >= 3 and int(first) >= int(second))
        )
    ):
        return f"{_spaced(first)}, {_spaced(second)}"
    return f"{first} to {second}"


def _in_pairs(number: str) -> str:
    """Three or four digits as said in pairs (a road's, a flight's, a room's): 405 "4 oh 5",
    280 "2 80", 1200 "12 hundred"; a round thousand as it is (flight 1000: one thousand)."""
    if len(number) == 4 and number.endswith("000"):
        return number
    rest = number[-2:]
    return f"{number[:-2]} " + (
        "hundred" if rest == "00" else f"oh {rest[1]}" if rest[0] == "0" else rest
    )


def _number_signs(text: str) -> str:
    """A number sign as "number" (before a number, a code, or alone before "is"), or a hashtag
    with its words apart ("#ThrowbackThursday": hashtag Throwback Thursday)."""
    text = _HASHTAG.sub(
        lambda m: "hashtag " + re.sub(r"(?<=[a-z])(?=[A-Z\d])", " ", m.group(1)), text
    )
    text = _LONE_NUMBER_SIGN.sub("number", text)
    text = _NUMBER_SIGN.sub(lambda m: "number " + _spaced(m.group(1)), text)
    return _CODE_SIGN.sub("number ", text)


def _wind(match: re.Match[str]) -> str:
    """NW northwest, SSE south-southeast: the last two letters one word, a third before it."""
    initials = match.group(2)
    last = "".join(_POINTS[c].lower() for c in initials[-2:])
    said = f"{_POINTS[initials[0]].lower()}-{last}" if len(initials) == 3 else last
    return match.group(0)[: match.start(2) - match.start()] + said


def _road(match: re.Match[str]) -> str:
    name, number = match.group(1).rstrip("-. "), match.group(2)
    return f"{_ROAD_NAMES.get(name, name)} {_in_pairs(number) if len(number) == 3 else number}"


def _after_letters(match: re.Match[str]) -> str:
    letters = _letter_by_letter(match.group(1) or "")
    return letters + " " + ", ".join(map(_spaced, match.group(2).split("-")))


def _month_day(match: re.Match[str]) -> str:
    word, month, day = match.group(1), int(match.group(2)), int(match.group(3))
    if word[:2].lower() == "by" and month < day:  # "cut by 1/3", "by 12/15" (_BARE_MONTH_DAY)
        return match.group(0)
    return f"{word}{_MONTHS[month - 1]} {_ordinal(day)}"


def _stars(figure: str, out_of: int | None, counted: bool) -> str:
    """A rating in stars (written.spoken_stars): 4.8 stars, 4 out of 5 stars, 1 star."""
    if out_of:
        return f"{figure} out of {out_of} stars"
    return f"{figure} {'star' if figure == '1' else 'stars'}"


def _places(text: str) -> str:
    """Places', roads', flights', winds' and keys' short forms (_PLACE, _ROAD, _WIND,
    _KEY_NAMES) as said."""
    text = _PLACE.sub(lambda m: "PO" if m.group(3) else _PLACE_WORDS[m[1] or m[2]], text)
    text = _FLIGHT.sub(lambda m: m.group(1) + _in_pairs(m.group(2)), _ROAD.sub(_road, text))
    text = _WIND.sub(_wind, text)
    return _KEY_NAMES.sub(lambda m: KEY_WORDS[m[1] or m[2] or m[3]], text)


def _rating(match: re.Match[str]) -> str:
    top, bottom = match.group(1), match.group(2)
    if "." not in top:
        before = match.string[max(0, match.start() - 30) : match.start()]
        after = match.string, match.end()
        counted = _COUNTED_AFTER.match(*after)
        rated = bool(_RATED_BEFORE.search(before) or _RATED_AFTER.match(*after)) or (
            bottom in ("10", "100") and counted is not None and counted[1] not in _MEASURES
        )
        if bottom not in ("5", "10", "100") or int(top) > int(bottom):
            return match.group(0)
        if not rated and top != bottom:
            return match.group(0)
    return f"{top} out of {bottom}"


def _hours_minutes(match: re.Match[str]) -> str:
    hours, minutes = match.group(1), match.group(2)
    return (
        f"{hours} hour{'' if hours == '1' else 's'} {minutes} minute{'' if minutes == '1' else 's'}"
    )


def _roman(match: re.Match[str]) -> str:
    """A Roman numeral after a name: cardinal ("World War 2", "Type 2"), a monarch's or a
    pope's ordinal ("Henry the eighth"); a lone V or X only after such a name ("Plan X")."""
    name, numeral = match.group(1), match.group(2)
    value = roman_value(numeral)
    if value is None or value < 2:
        return match.group(0)
    if name in REGNAL:
        return f"{name} the {_ordinal_word(value) if value >= 10 else _UNIT_ORDINALS[value]}"
    if len(numeral) == 1:
        return match.group(0)  # "Plan B", "Vitamin X": a letter
    return f"{name} {value}"


def _ordinal(n: int) -> str:
    return f"{n}{ordinal_suffix(n)}"


def _fraction_words(top: int, bottom: int, *, described: bool = False) -> str | None:
    """A proper fraction by its names (3 quarters), None for any other pair; `described`: one
    that describes a noun takes its singular name ("a 3/4 lb bag": a 3 quarter pound bag)."""
    if not 0 < top < bottom or bottom in (11, 12) or bottom > 99:
        return None
    # 1/20 one twentieth, 3/16 three sixteenths
    one, many = _FRACTIONS.get(bottom) or (_ordinal_word(bottom), _ordinal_word(bottom) + "s")
    return f"one {one}" if top == 1 else f"{top} {one if described else many}"


def _fraction(match: re.Match[str]) -> str:
    words = _fraction_words(int(match.group(1)), int(match.group(2)))
    return words or f"{match.group(1)} {match.group(2)}"


def _measured_fraction(match: re.Match[str]) -> str:
    """A fraction of a measure: "9/10 mi" nine tenths of a mile, "2 and 1/2 tsp" teaspoons."""
    top, bottom, unit = match.group(1), match.group(2), match.group(3) or match.group(4)
    one, many = _UNITS[unit] if match.group(3) else (_MEASURES[unit], unit)
    before = match.string[max(0, match.start() - 8) : match.start()]
    described = _ARTICLE_BEFORE.search(before) is not None
    words = _fraction_words(int(top), int(bottom), described=described)
    if words is None or _AND_BEFORE.search(before):  # improper, or a whole number's part
        return f"{top}/{bottom} {many}"
    if described or top == "1":  # "one half teaspoon" says "1/2 tsp salt" and "a 1/2 lb bag"
        return f"{words} {one}"
    return f"{words} of {'an' if one[0] in 'aeiou' or one.startswith('hour') else 'a'} {one}"


_UNIT_ORDINALS = (
    "", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
)  # fmt: skip


def _ordinal_word(n: int) -> str:
    """10 to 99 as an ordinal word (a fraction's bottom): espeak spells "16ths" as letters."""
    if n < 20:
        return "twelfth" if n == 12 else _TEENS[n - 10] + "th"
    tens, units = divmod(n, 10)
    if units == 0:
        return _TENS[str(tens)][:-1] + "ieth"
    return f"{_TENS[str(tens)]}-{_UNIT_ORDINALS[units]}"


def _dotted(match: re.Match[str]) -> str:
    parts = match.group(0).split(".")
    if len(parts) == 4 and all(int(p) <= 255 for p in parts):
        return " dot ".join(_spaced(p) for p in parts)
    return " point ".join(parts)


def _unit(match: re.Match[str]) -> str:
    number, unit = match.group(1), match.group(2) or match.group(3) or match.group(4)
    one, many = _UNITS[unit]
    # After "a" the figure describes the noun that follows: "a 65 watt charger".
    described = (
        _ARTICLE_BEFORE.search(match.string, max(0, match.start() - 5), match.start()) is not None
    )
    return f"{number} {one if number == '1' or described else many}"


def _day_dotted(match: re.Match[str]) -> str:
    """The day's name; its period stays only where it also ends the sentence."""
    before = match.string[: match.start()].split()
    if match.group(1) == "Sun" and (not before or before[-1].lower() not in _BEFORE_A_DAY):
        return match.group()  # "I love the Sun."
    rest = match.string[match.end() :]
    ends = not rest.strip() or re.match(r"\s+[A-Z]", rest) is not None
    return _DAYS[match.group(1)] + ("." if ends else "")


def _figure_sign(match: re.Match[str]) -> str:
    spaced = match.start() == 0 or match.string[match.start() - 1].isspace()
    return ("" if spaced else " ") + _FIGURE_SIGNS[match[1] or match[2]] + " "


def _digit_runs(text: str) -> str:
    """Phone numbers in their groups, also those written in one run, and a run of digits too
    long to be an amount in fours."""
    text = PHONE.sub(_phone, text)
    text = _LOCAL_PHONE.sub(lambda m: f"{m[1]}{_spaced(m[2])}, {_spaced(m[3])}", text)
    text = _HYPHENED.sub(lambda m: ", ".join(map(_spaced, m[0].split("-"))), text)
    text = _BARE_PHONE.sub(
        lambda m: (
            ("plus " if m[0][0] == "+" else "")
            + ", ".join(_spaced(g.lstrip("+")) for g in m.groups() if g)
        ),
        text,
    )
    if "+" in text:
        text = INTERNATIONAL_GROUPS.sub(
            lambda m: "plus " + ", ".join(map(_spaced, international_groups(m))), text
        )
    text = _INTERNATIONAL.sub(lambda m: "plus " + _in_groups(m[1], 3), text)
    text = _SHORT_CODE.sub(lambda m: m[1] + _spaced(m[2]), text)
    text = _STAR_CODE.sub(lambda m: f"{m[1]}star {_spaced(m[2])}", text)
    return _LONG_DIGITS.sub(lambda m: _in_groups(m[0], 4), text)


def _dates(text: str) -> str:
    """Dates written with numbers, a month's short name, a month's name and its days."""
    if "T" in text:
        text = spoken_timestamps(text, " at ", ("plus", "minus"))
    text = _US_DATE.sub(lambda m: _date(m.group(1), m.group(2), m.group(3)), text)
    text = _YMD_DATE.sub(lambda m: _date(m.group(2), m.group(3), m.group(1)), text)
    text = _ISO_DATE.sub(lambda m: _date(m.group(2), m.group(3), m.group(1)), text)
    text = _MONTH_ABBREVIATION.sub(lambda m: _ABBREVIATED_MONTHS[m.group(1)], text)
    text = _DAY_MONTH.sub(
        lambda m: f"the {_ordinal(int(m[2]))} of {_ABBREVIATED_MONTHS.get(m[3], m[3])}", text
    )
    text = _NAMED_MONTH_SPAN.sub(
        lambda m: f"{m[1]} {_ordinal(int(m[2]))} to {_ordinal(int(m[3]))}", text
    )
    return _MONTH_NAMED_DAY.sub(lambda m: f"{m.group(1)} {_ordinal(int(m.group(2)))}", text)


def _month_days(text: str) -> str:
    """A month and a day with a slash and no year: after a word that asks for a date, in a
    span, or with a day past the 12th."""
    text = _MONTH_DAY.sub(_month_day, text)
    text = _MONTH_DAY_SPAN.sub(_month_day_span, text)
    return _BARE_MONTH_DAY.sub(
        lambda m: f"{_MONTHS[int(m.group(1)) - 1]} {_ordinal(int(m.group(2)))}", text
    )


def _weekdays(text: str) -> str:
    """Weekdays' short names: in a span, before a date, two with a slash, with a period."""
    text = _DAY_SPAN.sub(lambda m: f"{_day(m.group(1))} to {_day(m.group(2))}", text)
    text = _WEEKDAYS.sub("Monday to Friday", text)
    text = _DAY_DATE.sub(lambda m: _DAYS[m.group(1)], text)
    text = _DAY_PAIR.sub(lambda m: f"{_DAYS[m[1]]} and {_DAYS[m[2]]}", text)
    return _DAY_DOTTED.sub(_day_dotted, text)


def _counts_and_pages(text: str) -> str:
    """One of a count (Step 1/3), N/A, p. and pp., Est. and a date's pattern (MM/DD/YYYY)."""
    if "/" in text:
        text = _NOT_APPLICABLE.sub("N A", _OF_TOTAL.sub(r"\1 of \2", text))
    if "p." in text:
        text = _PAGES.sub(lambda m: "pages " if m[1] == "pp" else "page ", text)
    if "st." in text:
        text = _EST.sub(lambda m: m[1] + ("stablished " if m[2] is not None else "stimated "), text)
    if "mm" in text.lower():
        text = _DATE_PATTERN.sub(_date_pattern, text)
    return text


def english(text: str) -> str:
    """`text` with what espeak-ng misreads written out as it is said."""
    if "@" in text or "." in text:
        text = ADDRESS.sub(_web_address, text)
    if any("\u3380" <= c <= "\u33ff" for c in text):  # a unit in one square character: ㎏
        text = re.sub("[\u3380-\u33ff]", lambda m: unicodedata.normalize("NFKC", m.group(0)), text)
    text = _dates(_counts_and_pages(text))
    text = _BRAND.sub(lambda m: _BRAND_NAMES[m[0]], _TITLES.sub(r"\1", _places(text)))
    text = _DOTTED_LETTERS.sub(_dotted_letters, text)
    text = _SHORT_FORMS.sub(lambda m: _SHORT_FORM_WORDS[(m.lastindex or 1) - 1], text)
    text = _MIN_MAX.sub(lambda m: f"{m[1][0]}{'inimum' if m[1][1] == 'i' else 'aximum'} ", text)
    text = _weekdays(text)
    text = _STREET_WORD.sub(lambda m: _STREET[m.group(1) or m.group(2)], text)
    text = _DRIVE.sub(r"\1Drive", _COMPASS.sub(lambda m: _POINTS[m.group(1)], text))
    text = _STATE_ZIP.sub(_state_zip, text)
    text = _CLOSE_VERB.sub(r"\1\2loze", text)
    text = _month_days(text)
    text = _NUMBERED.sub(lambda m: _NUMBERED_WORDS[m[1]] if m[1] else "version ", text)
    text = _ABOUT.sub("about ", text)
    text = _MONEY_SPAN.sub(r"\1\2 to \1", _SIGNED_SPAN.sub(" to ", text))
    if "," in text:
        text = _EUROPEAN_PRICE.sub(lambda m: m.group(1).replace(".", "") + "." + m.group(2), text)
    text = _MONEY.sub(_money, text)
    text = _MONEY_AFTER.sub(lambda m: _amount(m.group(3), m.group(1), m.group(2)), text)
    text = _after_decades(_DECADE.sub(_decade, _DECADE_SPAN.sub(_decade_span, text)))
    text = _LETTER_HOURS.sub(lambda m: f"{m[1]} {m[2].upper()}M to {m[3]} {m[4].upper()}M", text)
    text = _HOURS_SPAN.sub(r"\1 to ", text)
    text = _TIME.sub(_time, _CLOCK_SPAN.sub(_clock_span, text))
    text = _VIDEO_LINES.sub(lambda m: f"{_in_pairs(m.group(1))} {m.group(2)}", text)
    text = _TIME_SPAN.sub(r" \1 to ", text)
    text = RATIO.sub(r"\1 to \2", text)
    text = spoken_stars(text, _stars)
    text = _RATING.sub(_rating, text)
    text = _EMERGENCY.sub(lambda m: m.group(1) + _spaced(m.group(2)), text)
    text = _PER.sub(lambda m: f"{m.group(1)} per {_TIME_WORDS.get(m.group(2), m.group(2))}", text)
    text = _TIME_ADJECTIVE.sub(lambda m: "-" + _TIME_WORDS[m.group(1)], text)
    text = _PLAN.sub(lambda m: f"{m.group(1)} oh {m.group(2)} {m.group(3).upper()}", text)
    text = _EXTENSION.sub(
        lambda m: ("extension " if m[1] else " extension ") + _spaced(m[1] or m[2]), text
    )
    text = _MASKED.sub(lambda m: "ending in " + _spaced(m.group(1)), text)
    text = _KEYS.sub(lambda m: f"{m.group(1)} {'star' if m.group(2) == '*' else 'pound'}", text)
    text = _ROOM.sub(
        lambda m: _NO.sub("number", m.group(1)).replace("#", "") + _in_pairs(m.group(2)), text
    )
    text = _KEYED.sub(_code, _CODE.sub(_code, text))
    text = _FORM.sub(r"\1 \2 \3", text)
    if "#" in text:
        text = _number_signs(text)
    text = _PRESSURE.sub(r"\1\2\3 over \4", text)
    text = _SLASHES.sub(lambda m: m.group(0).replace("/", " "), text)
    text = _VANITY.sub(r"\1, \2, ", text)
    text = _digit_runs(text)
    if "_" in text:
        text = _UNDERSCORE.sub(" underscore ", text)
    text = _DOTTED.sub(_dotted, text)
    text = _AFTER_LETTERS.sub(_after_letters, text)
    text = _FRACTION_SPAN.sub(r"\1 to ", _MIXED.sub(r"\1 and ", text))
    text = _FRACTION.sub(_fraction, _FRACTION_MEASURE.sub(_measured_fraction, text))
    if "0x" in text:
        text = _HEX.sub(lambda m: "0 ex " + _spaced(m.group(1).upper()), text)
    text = _MILLION.sub(r"\1 million", _TIMES.sub(r"\1 times", _BY.sub(r"\1 by ", text)))
    text = _SPELLED.sub(_spelled, text)
    text = _THOUSAND.sub(r"\1 thousand", _FEET.sub(r"\1 foot \2", text))
    text = _OR_MORE.sub(r"\1 or more", text)
    text = _BARE_DEGREES.sub(lambda m: f"{m[1]}°{m[2]}" if m[1] else f"{m[3]}{m[4]}°{m[5]}", text)
    text = _UNIT.sub(_unit, _HOURS_MINUTES.sub(_hours_minutes, text))
    if any(c in text for c in "^=π") or any(c in SUPERSCRIPTS for c in text):
        text = POWER.sub(_power, _EQUALS_MINUS.sub(" minus ", _PI.sub(" pi ", text)))
        if "=" in text:
            text = _TERM_MINUS.sub(" minus ", text)
    text = _SIGN.sub(lambda m: f" {_SIGNS[m.group(1)]} ", _MENU_STEP.sub(", ", text))
    if any(c in text for c in _FIGURE_SIGNS):
        text = _BEFORE_FIGURE.sub(_figure_sign, text)
    if "\N{UPWARDS ARROW}" in text or "\N{DOWNWARDS ARROW}" in text:
        text = _ARROW.sub(lambda m: _ARROW_WORDS[m.group(1)], text)
    text = _OVER.sub(lambda m: _OVER_WORDS[m.group(1)], text)
    text = _SHARP.sub(r"\1 sharp", text)
    text = _SPAN.sub(_span, text)
    return _LETTER_A.sub("Eigh", ROMAN_AFTER_NAME.sub(_roman, text))
