"""The build benchmark's stories: five kinds of page (pages/build/), each story filled with data
of its own from a generator seeded by its number, and the visible changes of the head build."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from pathlib import Path
from string import Template

from bench import build_words as w

TEMPLATES = Path(__file__).resolve().parent / "pages" / "build"
KINDS = ("dashboard", "form", "table", "article", "settings")
CHANGES = ("color", "text", "move", "badge")
# !important: the pages' own class selectors are more specific than these attribute selectors.
CHANGE_CSS = {
    "color": '[data-bench="button"] { background: #db2777 !important;'
    " border-color: #db2777 !important; }",
    "move": '[data-bench="block"] { margin-top: 28px !important; }',
}


@dataclass(frozen=True)
class Story:
    index: int
    kind: str
    name: str  # the path under the build folder, without .png: the story's name in Viewfinder

    @property
    def file(self) -> str:
        return self.name + ".png"


def story(index: int) -> Story:
    kind = KINDS[index % len(KINDS)]
    return Story(index, kind, f"{kind}/{kind}-{index:03d}")


def changed_indices(stories: int, changed: int) -> list[int]:
    """One story from each of ``changed`` equal slices of the build, taking the kinds of page in
    turn, so that every kind gets its share of changes."""
    picked = []
    for i in range(changed):
        low, high = i * stories // changed, (i + 1) * stories // changed
        kind = i % len(KINDS)
        picked.append(next((j for j in range(low, high) if j % len(KINDS) == kind), low))
    return picked


def change_for(position: int) -> str:
    return CHANGES[position % len(CHANGES)]


def _template(name: str) -> Template:
    return Template((TEMPLATES / name).read_text(encoding="utf-8"))


def _person(rng: random.Random) -> tuple[str, str]:
    return rng.choice(w.FIRST), rng.choice(w.LAST)


def _money(rng: random.Random, low: int, high: int) -> str:
    return f"${rng.randint(low, high):,}.{rng.randint(0, 99):02d}"


def _pill(rng: random.Random) -> str:
    label, tone = rng.choice(w.STATUSES)
    return f'<span class="pill {tone}">{label}</span>'


def _dashboard(rng: random.Random) -> dict[str, str]:
    count = rng.choice((3, 4))
    cards = []
    for label, prefix, suffix in rng.sample(w.METRICS, count):
        value = f"{rng.uniform(0.5, 9.9):.1f}" if suffix else f"{rng.randint(120, 98000):,}"
        delta = rng.uniform(-12, 18)
        tone = "up" if delta >= 0 else "down"
        cards.append(
            f'<div class="panel card"><div class="label">{label}</div>'
            f'<div class="value">{prefix}{value}{suffix}</div>'
            f'<div class="{tone}">{delta:+.1f}% vs last period</div></div>'
        )
    bars = rng.randint(8, 16)
    heights = [rng.randint(15, 100) for _ in range(bars)]
    top = heights.index(max(heights))
    rows = "".join(
        f"<tr><td>{' '.join(_person(rng))}</td><td class='num'>{_money(rng, 20, 4000)}</td>"
        f"<td>{_pill(rng)}</td></tr>"
        for _ in range(rng.randint(6, 9))
    )
    return {
        "card_count": str(count),
        "cards": "".join(cards),
        "chart_title": rng.choice(("Orders per week", "Revenue by day", "Sign-ups", "Visits")),
        "bars": "".join(
            f'<div class="bar{" hi" if i == top else ""}" style="height:{h}%"></div>'
            for i, h in enumerate(heights)
        ),
        "axis": "".join(f"<span>W{i + 1}</span>" for i in range(bars)),
        "list_title": rng.choice(("Latest orders", "Recent payments", "Top customers")),
        "list_head": "Customer",
        "rows": rows,
    }


def _form(rng: random.Random) -> dict[str, str]:
    first, last = _person(rng)
    values = {
        "first": first,
        "last": last,
        "first_l": first.lower(),
        "last_l": last.lower(),
        "product": rng.choice(w.PRODUCTS),
        "city": rng.choice(w.CITIES),
        "n2": str(rng.randint(10, 99)),
        "n4": str(rng.randint(1000, 9999)),
        "n4b": str(rng.randint(1000, 9999)),
    }
    fields = []
    chosen = sorted(rng.sample(range(len(w.FIELDS)), rng.randint(5, 8)))
    error = rng.choice(chosen)
    for i in chosen:
        label, sample, placeholder, wide = w.FIELDS[i]
        filled = rng.random() < 0.7
        text = sample.format(**values) if filled else placeholder
        area = " area" if label == "Message" else ""
        classes = "field" + (" wide" if wide else "") + (" error" if i == error else "")
        hint = "Please check this field." if i == error else f"Used for {label.lower()} only."
        fields.append(
            f'<div class="{classes}"><label>{label}</label>'
            f'<div class="input{area}{"" if filled else " empty"}">{text}</div>'
            f'<div class="hint">{hint}</div></div>'
        )
    steps = rng.sample(("Fill in the details", "Confirm by email", "Invite the team",
                        "Choose a plan", "Start the trial", "Add a payment method"), 4)  # fmt: skip
    return {
        "form_title": "Details",
        "intro": f"Fields marked in red need attention. Step {rng.randint(1, 3)} of 4.",
        "fields": "".join(fields),
        "consent": rng.choice(("Send me product news", "I agree to the terms", "Remember me")),
        "help_title": "What happens next",
        "steps": "".join(f"<li>{s}</li>" for s in steps),
        "help_text": f"Questions? Our {rng.choice(w.CITIES)} office answers within a day.",
    }


def _table(rng: random.Random) -> dict[str, str]:
    rows = []
    total = rng.randint(40, 900)
    for _ in range(rng.randint(12, 16)):
        first, last = _person(rng)
        accent = rng.choice(w.ACCENTS)[0]
        rows.append(
            f'<tr><td class="sel"><div class="tick{" on" if rng.random() < 0.2 else ""}">'
            f'</div></td><td><span class="who"><i style="background:{accent}">{first[0]}'
            f"{last[0]}</i>{first} {last}</span></td>"
            f"<td>{first.lower()}@{last.lower()}.example</td><td>{rng.choice(w.CITIES)}</td>"
            f"<td>{rng.randint(1, 59)} min ago</td><td class='num'>{_money(rng, 5, 9000)}</td>"
            f"<td>{_pill(rng)}</td></tr>"
        )
    head = ("Name", "Email", "City", "Last active", "Spend", "Status")
    chips = rng.sample(("All", "Active", "Invited", "Suspended", "Trial", "Annual"), 4)
    return {
        "filter": f"Filter {rng.choice(('by name', 'by email', 'by city'))}…",
        "chips": "".join(
            f'<span class="chip{" on" if i == 0 else ""}">{c}</span>' for i, c in enumerate(chips)
        ),
        "count_text": f"{total:,} results",
        "head": "".join(f"<th{' class=num' if h == 'Spend' else ''}>{h}</th>" for h in head),
        "rows": "".join(rows),
        "pager": f"Page 1 of {total // 15 + 1}",
    }


def _article(rng: random.Random) -> dict[str, str]:
    first, last = _person(rng)
    # Walk one shuffled copy of the sentences, so that a sentence comes back only after all
    # the others were used.
    sentences = itertools.cycle(rng.sample(w.SENTENCES, len(w.SENTENCES)))
    paragraphs = "".join(
        f"<p>{' '.join(next(sentences) for _ in range(rng.randint(3, 5)))}</p>"
        for _ in range(rng.randint(4, 6))
    )
    return {
        "meta": f"By {first} {last} · {rng.randint(1, 28)} March 2024 · "
        f"{rng.randint(3, 14)} min read",
        "lead": next(sentences) + " " + next(sentences),
        "paragraphs": paragraphs,
        "quote": next(sentences),
        "toc": "".join(f"<li>{t}</li>" for t in rng.sample(w.ARTICLE_TITLES, 4)),
        "tags": "".join(f"<span>{t}</span>" for t in rng.sample(w.TAGS, rng.randint(3, 6))),
    }


def _settings(rng: random.Random) -> dict[str, str]:
    menu = rng.sample(w.SETTINGS_TITLES, 6)
    toggles = "".join(
        f'<div class="setting"><div class="text">{label}<div>{text}</div></div>'
        f'<div class="switch{" on" if rng.random() < 0.5 else ""}"></div></div>'
        for label, text in rng.sample(w.TOGGLES, rng.randint(3, 5))
    )
    selects = "".join(
        f'<div class="setting"><div class="text">{label}</div>'
        f'<div class="select">{rng.choice(options)} ▾</div></div>'
        for label, options in rng.sample(w.SELECTS, rng.randint(2, 3))
    )
    return {
        "menu": "".join(f"<li{' class=on' if i == 0 else ''}>{m}</li>" for i, m in enumerate(menu)),
        "group_title": rng.choice(("Alerts", "Sign-in", "Sharing", "Reports")),
        "toggles": toggles,
        "second_title": "Regional",
        "selects": selects,
        "danger": f"Deleting the {rng.choice(w.PRODUCTS)} workspace removes "
        f"{rng.randint(2, 90)} projects for everyone.",
    }


BODIES = {
    "dashboard": (_dashboard, w.DASHBOARD_TITLES, "Export", "New report"),
    "form": (_form, w.FORM_TITLES, "Cancel", "Save changes"),
    "table": (_table, w.TABLE_TITLES, "Import", "Add new"),
    "article": (_article, w.ARTICLE_TITLES, "Share", "Subscribe"),
    "settings": (_settings, w.SETTINGS_TITLES, "Discard", "Save settings"),
}


def html(item: Story, change: str | None = None) -> str:
    """The story's page; ``change`` (one of CHANGES) is the visible edit of the head build."""
    rng = random.Random(f"viewfinder-bench-build-{item.index}")
    fill, titles, secondary, primary = BODIES[item.kind]
    title, renamed = rng.sample(titles, 2)
    accent, soft = rng.choice(w.ACCENTS)
    first, last = _person(rng)
    section = rng.choice(w.NAV)
    body = _template(f"{item.kind}.html").substitute(fill(rng))
    return _template("shell.html").substitute(
        product=rng.choice(w.PRODUCTS),
        title=renamed if change == "text" else title,
        accent=accent,
        accent_soft=soft,
        nav="".join(f"<a{' class=active' if n == section else ''}>{n}</a>" for n in w.NAV[:5]),
        initials=first[0] + last[0],
        workspace=f"Workspace {item.index + 1}",
        section=section,
        primary=primary,
        secondary=secondary,
        badge=' <span class="badge">New</span>' if change == "badge" else "",
        css=(TEMPLATES / "common.css").read_text(encoding="utf-8"),
        kind_css=(TEMPLATES / f"{item.kind}.css").read_text(encoding="utf-8"),
        change_css=CHANGE_CSS.get(change or "", ""),
        body=body,
    )
