"""The vocabulary the build benchmark's pages are filled from (see build_pages.py)."""

from __future__ import annotations

PRODUCTS = (
    "Northwind",
    "Lumen",
    "Fieldnote",
    "Harbor",
    "Quarry",
    "Tessel",
    "Brightline",
    "Copperleaf",
    "Orbitly",
    "Pinecrest",
    "Sableworks",
    "Tidepool",
)
# (accent, lighter shade) pairs; none is the pink the colour change uses, so it always shows.
ACCENTS = (
    ("#2563eb", "#93c5fd"),
    ("#059669", "#6ee7b7"),
    ("#7c3aed", "#c4b5fd"),
    ("#ea580c", "#fdba74"),
    ("#0891b2", "#67e8f9"),
    ("#4f46e5", "#a5b4fc"),
    ("#65a30d", "#bef264"),
    ("#0f766e", "#5eead4"),
)
FIRST = (
    "Amara", "Bruno", "Chen", "Dalia", "Emeka", "Freya", "Goran", "Hana", "Ivo", "Jules",
    "Kenji", "Lena", "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq",
    "Uma", "Viktor", "Wen", "Ximena", "Yusuf", "Zoe",
)  # fmt: skip
LAST = (
    "Abara", "Becker", "Castillo", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad",
    "Ito", "Jansen", "Kowalski", "Larsen", "Moreau", "Novak", "Okafor", "Petrov", "Quist",
    "Rossi", "Sato", "Tanaka", "Urban", "Varga", "Weber", "Yilmaz", "Zhou",
)  # fmt: skip
CITIES = (
    "Lisbon", "Oslo", "Nairobi", "Osaka", "Lyon", "Austin", "Gdansk", "Porto", "Leeds",
    "Tallinn", "Quito", "Hobart", "Graz", "Malmo", "Cork", "Bergen", "Accra", "Kyoto",
)  # fmt: skip
ITEMS = (
    "Oak desk", "Linen throw", "Desk lamp", "Wool rug", "Tea kettle", "Road bike helmet",
    "Trail shoes", "Camp stove", "Rain jacket", "Notebook set", "Ceramic mug", "Bookshelf",
    "Standing mat", "Monitor arm", "Water filter", "Chef knife", "Cast iron pan", "Backpack",
)  # fmt: skip
STATUSES = (("Paid", "ok"), ("Pending", "warn"), ("Refunded", "info"), ("Failed", "bad"))
NAV = ("Overview", "Orders", "Customers", "Catalog", "Reports", "Settings")

DASHBOARD_TITLES = (
    "Revenue overview", "Store performance", "Weekly summary", "Sales dashboard",
    "Growth report", "Operations overview", "Channel performance", "Quarterly review",
)  # fmt: skip
METRICS = (
    ("Revenue", "$", ""), ("Orders", "", ""), ("Active users", "", ""), ("Conversion", "", "%"),
    ("Refunds", "$", ""), ("Avg. basket", "$", ""), ("Sessions", "", ""), ("Churn", "", "%"),
)  # fmt: skip
FORM_TITLES = (
    "Create account", "Shipping address", "Invite teammate", "Billing details",
    "New project", "Support request", "Edit profile", "Add payment method",
)  # fmt: skip
# (label, sample value, placeholder, wide)
FIELDS = (
    ("Full name", "{first} {last}", "Jane Doe", False),
    ("Email", "{first_l}.{last_l}@example.com", "you@example.com", False),
    ("Company", "{product} Ltd", "Company name", False),
    ("Phone", "+44 20 7{n4} {n4b}", "+1 555 0100", False),
    ("City", "{city}", "City", False),
    ("Postcode", "{n4}", "Postcode", False),
    ("Street address", "{n2} Harbour Road", "Street and number", True),
    ("Role", "Engineering lead", "Your role", False),
    ("Team size", "{n2} people", "How many?", False),
    ("Message", "We would like to move {n2} seats to the annual plan.", "Tell us more", True),
)
TABLE_TITLES = (
    "Customers", "Team members", "Open invoices", "Subscribers", "Vendors",
    "Support agents", "Partners", "Accounts",
)  # fmt: skip
ARTICLE_TITLES = (
    "Field notes from the harbour", "How we ship weekly", "A year of quiet releases",
    "Lessons from the archive", "Designing for slow networks", "The case for fewer meetings",
    "Notes on careful migrations", "What the data did not say",
)  # fmt: skip
SENTENCES = (
    "The team started with a single question and a whiteboard full of arrows.",
    "Nobody expected the first prototype to survive contact with real customers.",
    "Every release since then has been smaller, calmer and easier to undo.",
    "We measured twice, which turned out to be once more than the budget allowed.",
    "The old dashboard answered questions nobody was asking any more.",
    "A careful migration is mostly a list of things you decided not to change.",
    "Support tickets dropped by a third once the forms explained themselves.",
    "Most of the work happened in the review, not in the code.",
    "The morning stand-up became a short note in a shared document.",
    "Our slowest page was also the one people opened most often.",
    "We kept a log of every decision, including the ones we later reversed.",
    "The night shift found the bug that the test suite had politely ignored.",
    "Small screenshots of every screen caught more regressions than any chart.",
    "The new layout moved one button, and the support queue noticed within an hour.",
    "Caching helped, but deleting the unused feature helped more.",
    "Each city office kept its own habits, and the product learned to respect them.",
    "A good default is worth more than a dozen settings.",
    "The quiet releases were the ones that nobody had to write about.",
)
TAGS = (
    "engineering", "design", "process", "operations", "research", "culture",
    "performance", "testing", "releases", "support",
)  # fmt: skip
SETTINGS_TITLES = (
    "Notifications", "Workspace settings", "Security", "Billing preferences",
    "Integrations", "Privacy", "Team defaults", "Email preferences",
)  # fmt: skip
TOGGLES = (
    ("Email digests", "A summary of activity every morning."),
    ("Mentions", "Notify me when someone mentions me."),
    ("Two-factor sign-in", "Ask for a code on new devices."),
    ("Weekly report", "Send the weekly report to all admins."),
    ("Public profile", "Let people outside the workspace see my name."),
    ("Auto-archive", "Archive finished projects after 30 days."),
    ("Beta features", "Try features before they are released."),
    ("Login alerts", "Email me when my account signs in from a new place."),
)
SELECTS = (
    ("Language", ("English", "Deutsch", "Francais", "Portugues", "Nederlands")),
    ("Time zone", ("UTC", "Europe/Lisbon", "Europe/Oslo", "Asia/Tokyo", "America/Chicago")),
    ("Date format", ("2024-03-14", "14/03/2024", "03/14/2024", "14 Mar 2024")),
    ("Week starts on", ("Monday", "Sunday", "Saturday")),
)
