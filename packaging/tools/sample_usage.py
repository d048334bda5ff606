"""The authored usage history of the sample memory: who looked at what, when, over one year.

Each session is one search or open: the entities accessed together (they become co-occurrences).
Topics are clusters of entities that get looked up together, most central first; periods say when
a topic was being worked on and how often; bursts are single busy days (the ingest outage); quiet
periods are holidays. ``generate`` turns these tables into timestamped sessions with a fixed random
seed, so the output is the same on every run.

Patterns built in on purpose (they make salience, decay and co-occurrence differ visibly):
- hot and recent: the Harbor v2 ingest work and the Sines pilot, weekly more frequent until the end;
- heavy long ago, then forgotten: the Legacy ETL clean-up (Nov-Dec 2025), the PyCon talk (until
  March 2026), the Tidepool DST bug (until January 2026), a Ledger weekend in January 2026;
- bursty: the ingest outage of 2026-06-09 (dozens of accesses in one morning, few days);
- steady and low: the 1:1 every Tuesday, the home lab at weekends, dotfiles now and then;
- never accessed: about a third of the entities (no session names them).
"""

from __future__ import annotations

import math
import random
from datetime import UTC, date, datetime, timedelta

SEED = 20261120
END = datetime(2026, 11, 20, 17, 30, tzinfo=UTC)  # the last moment of the history (the anchor)
FIRST_DAY = (END - timedelta(days=364)).date()

TOPICS: dict[str, tuple[str, ...]] = {
    "harbor": ("Harbor", "Sofia Almeida", "Harbor Repository Layout", "TimescaleDB", "Lucía Ferrer",
               "Linear", "Preference: Small focused pull requests", "Preference: Code first, explanation after",
               "Harbor API", "Decision: Harbor monorepo"),
    "one_on_one": ("Weekly 1:1 with Rui", "Rui Carvalho", "Sofia Almeida", "Harbor 2.0"),
    "legacy": ("Legacy ETL", "Apache Airflow", "Airflow to Dagster Migration", "Legacy ETL Repository Layout",
               "Dagster", "Decision: Migrate from Airflow to Dagster", "Dagster Migration Retro 2025-06",
               "Amara Diallo", "pandas"),
    "redpanda": ("Redpanda", "Decision: Redpanda instead of Kafka", "Daan de Vries", "Q1 2026 Planning",
                 "confluent-kafka-python", "Exactly-once delivery", "Idempotent ingestion", "Harbor 2.0"),
    "tidepool_dst": ("Bug: Tidepool DST resample off-by-one", "Tidepool", "Chen Wei",
                     "Daylight saving time transitions", "Hypothesis", "Tidepool Repository Layout", "Polars",
                     "Preference: Time zones in UTC"),
    "pycon": ("PyCon PT 2026 Talk", "Talk: Resampling without tears", "PyCon Portugal", "Priya Natarajan",
              "PyCon PT Talk Rehearsal", "Porto", "marimo", "Downsampling", "Tidepool"),
    "ledger": ("Ledger", "Bug: Ledger CSV import wrong decimal separator", "DuckDB", "Decision: Pause Ledger",
               "Polars"),
    "ipma": ("Task: Renew IPMA data agreement", "Paulo Reis", "Dataset: IPMA Tide Gauges", "IPMA",
             "Tidal harmonic analysis"),
    "ingest_v2": ("Harbor Ingest Service", "Bug: Redpanda consumer lag after rebalance", "Redpanda", "Harbor",
                  "confluent-kafka-python", "Harbor 2.0", "Consumer group rebalance", "Backpressure",
                  "Harbor Production Config", "Idempotent ingestion", "psycopg 3"),
    "mentoring": ("Beatriz Santos", "Designing Data-Intensive Applications", "Bug: Flaky test_backfill_window",
                  "Preference: Explain SQL query plans", "Continuous aggregates", "pytest",
                  "Preference: Tests with real Postgres, not mocks"),
    "sines": ("Sines Harbour Pilot", "Ines Duarte", "Port of Sines Authority", "Buoy SN-01", "Buoy SN-02",
              "Dataset: Sines Buoy Stream", "Sines Pilot Fortnightly Sync", "Task: Write Sines data contract",
              "Data contract", "Decision: VPN-only data path for Sines", "Tiago Mendes", "Bug: Sines VPN MTU drops",
              "Sines Pilot Kickoff 2026-04", "Significant wave height"),
    "incident": ("Incident: Ingest Outage 2026-06-09", "Bug: Timescale compression job blocks inserts",
                 "TimescaleDB", "Harbor Ingest Service", "Bug: Sentry flood from retry storm", "Sentry",
                 "Runbook: Ingest Outage", "Grafana Dashboard: Ingest Health", "pgBouncer", "Hannah Berg",
                 "PostgreSQL", "Harbor Production Config"),
    "incident_after": ("Incident Review: Ingest Outage", "Incident: Ingest Outage 2026-06-09",
                       "Runbook: Timescale Compression", "Bug: Timescale compression job blocks inserts",
                       "Runbook: Ingest Outage", "Service level objective", "Error budget"),
    "tidepool_release": ("Tidepool 1.0.0", "Tidepool", "Tidepool 1.0 Release Call", "Felix Baumann", "Polars",
                         "uv", "GitHub Actions", "mkdocs-material", "Bug: Tidepool DST resample off-by-one"),
    "tidepool": ("Tidepool", "Felix Baumann", "Polars", "Preference: Polars lazy API",
                 "Decision: Keep Tidepool pure-Python wheels", "Tidepool Repository Layout",
                 "Decision: Polars for Tidepool internals", "pre-commit"),
    "anomaly": ("Anomaly Detection Model", "Kenji Watanabe", "LightGBM", "Decision: LightGBM for anomaly detection",
                "Polars", "marimo", "Dagster"),
    "dashboard": ("Buoy Dashboard", "Tomasz Nowak", "MapLibre GL JS", "Harbor API", "React", "uPlot",
                  "TanStack Query", "Playwright"),
    "security": ("Security Review 2026-09", "Nadia Haddad", "Harbor API", "FastAPI", "Pydantic"),
    "firmware": ("Bug: Firmware 3.2 duplicate sequence numbers", "Buoy Firmware 3.x", "Marco Rossi",
                 "Nautilus Instruments", "Firmware Sync with Nautilus 2026-10", "Idempotent ingestion",
                 "Buoy SN-02", "Buoy Fleet Registry", "Ana Ribeiro"),
    "timescale": ("Task: Upgrade Timescale to 2.17", "TimescaleDB", "PostgreSQL", "Continuous aggregates",
                  "Runbook: Timescale Compression", "Preference: Explain SQL query plans", "Ines Duarte"),
    "homelab": ("Home Lab", "Home Lab Inventory", "Proxmox VE", "Tailscale", "Synology NAS", "Home Assistant"),
    "homelab_backup": ("Bug: Proxmox backup stale NFS handle", "Proxmox VE", "Synology NAS", "Home Lab"),
    "dotfiles": ("Dotfiles", "Dotfiles Layout", "Neovim", "WezTerm", "tmux", "Preference: Gruvbox dark everywhere",
                 "Preference: Keyboard-driven tools"),
    "oncall": ("Decision: Weekly on-call rotation", "Hannah Berg", "Runbook: Ingest Outage",
               "Grafana Dashboard: Ingest Health", "Service level objective", "Error budget", "k9s"),
    "hiring": ("Hiring Panel SRE 2026-08", "Yusuf Demir", "Hannah Berg"),
}

# (topic, first day, last day, sessions per week (start, end: linear in between), which days)
# days: "work" Monday-Friday, "weekend", "tuesday", "all" (weekday evenings and weekends too).
PERIODS: tuple[tuple[str, str, str, tuple[float, float], str], ...] = (
    ("harbor", "2025-11-21", "2026-11-20", (3.0, 4.0), "work"),
    ("one_on_one", "2025-11-21", "2026-11-20", (1.0, 1.0), "tuesday"),
    ("legacy", "2025-11-21", "2025-12-19", (14.0, 10.0), "work"),
    ("redpanda", "2025-11-21", "2026-02-27", (9.0, 3.0), "work"),
    ("tidepool_dst", "2025-11-21", "2026-01-16", (6.0, 3.0), "all"),
    ("pycon", "2025-12-01", "2026-03-28", (2.0, 16.0), "all"),
    ("ledger", "2026-01-10", "2026-01-25", (5.0, 5.0), "weekend"),
    ("ipma", "2026-02-16", "2026-03-10", (3.0, 3.0), "work"),
    ("ingest_v2", "2026-01-05", "2026-11-20", (3.0, 13.0), "work"),
    ("mentoring", "2026-02-02", "2026-11-20", (2.0, 2.0), "work"),
    ("sines", "2026-03-18", "2026-11-20", (2.0, 11.0), "work"),
    ("incident_after", "2026-06-12", "2026-07-03", (3.0, 1.0), "work"),
    ("tidepool_release", "2026-06-15", "2026-07-24", (8.0, 8.0), "all"),
    ("tidepool", "2025-11-21", "2026-11-20", (2.0, 2.0), "all"),
    ("anomaly", "2026-04-20", "2026-11-20", (1.5, 3.0), "work"),
    ("dashboard", "2025-11-21", "2026-11-20", (1.0, 1.0), "work"),
    ("dashboard", "2026-05-11", "2026-05-29", (6.0, 6.0), "work"),
    ("security", "2026-09-10", "2026-10-02", (6.0, 4.0), "work"),
    ("firmware", "2026-09-08", "2026-11-20", (5.0, 6.0), "work"),
    ("timescale", "2026-10-26", "2026-11-20", (5.0, 7.0), "work"),
    ("homelab", "2025-11-21", "2026-11-20", (1.5, 1.5), "weekend"),
    ("dotfiles", "2025-11-21", "2026-11-20", (0.7, 0.7), "all"),
    ("oncall", "2025-11-21", "2026-11-20", (1.0, 1.0), "work"),
    ("hiring", "2026-08-24", "2026-08-28", (6.0, 6.0), "work"),
)

# (day, topic, sessions, first hour, last hour UTC): single busy days.
BURSTS: tuple[tuple[str, str, int, float, float], ...] = (
    ("2025-12-05", "homelab_backup", 5, 19.0, 23.0),
    ("2025-12-06", "homelab_backup", 4, 9.5, 13.0),
    ("2025-12-28", "homelab", 6, 10.0, 18.0),
    ("2026-06-09", "incident", 45, 10.2, 14.5),
    ("2026-06-10", "incident", 12, 8.5, 17.0),
    ("2026-06-11", "incident", 5, 9.0, 16.0),
    ("2026-06-12", "incident_after", 8, 13.0, 15.0),
    ("2026-07-20", "tidepool_release", 7, 12.0, 16.0),
)

# Holidays: no sessions at all, except the topics named.
QUIET: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("2025-12-22", "2026-01-02", ("homelab", "homelab_backup", "dotfiles", "tidepool", "tidepool_dst")),
    ("2026-08-03", "2026-08-21", ()),
)


class UsageError(Exception):
    """A table names an unknown topic or entity, or a period is out of the history's range."""


def _day(text: str) -> date:
    return date.fromisoformat(text)


def _poisson(rng: random.Random, mean: float) -> int:
    limit, product, count = math.exp(-mean), rng.random(), 0
    while product > limit:
        product *= rng.random()
        count += 1
    return count


def _quiet(day: date, topic: str) -> bool:
    return any(_day(a) <= day <= _day(b) and topic not in allowed for a, b, allowed in QUIET)


def _per_day(days: str, day: date) -> float:
    """Share of a week's sessions that fall on ``day`` for a day pattern (0 if none)."""
    weekend = day.weekday() >= 5
    return {"work": 0.0 if weekend else 0.2, "weekend": 0.5 if weekend else 0.0,
            "tuesday": 1.0 if day.weekday() == 1 else 0.0, "all": 1 / 7}[days]


def _moment(rng: random.Random, day: date, days: str) -> datetime:
    weekend = day.weekday() >= 5
    if weekend:
        low, high = 9.0, 22.0
    elif days == "all" and rng.random() < 0.4:
        low, high = 19.0, 23.0
    else:
        low, high = 8.0, 18.5
    return datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(seconds=rng.uniform(low, high) * 3600)


def _pick(rng: random.Random, members: tuple[str, ...]) -> list[str]:
    """The entities of one session: the topic's core most of the time, plus up to three others."""
    chosen = [members[0]] if rng.random() < 0.75 else []
    rest = list(members[1:])
    weights = [1.0 / (1 + i) ** 0.7 for i in range(len(rest))]
    for _ in range(rng.choice((0, 1, 1, 2, 2, 3))):
        if not rest:
            break
        index = rng.choices(range(len(rest)), weights)[0]
        chosen.append(rest.pop(index))
        weights.pop(index)
    return chosen or [members[0]]


def _check_tables(created: dict[str, datetime]) -> None:
    for topic, members in TOPICS.items():
        missing = [m for m in members if m not in created]
        if missing:
            raise UsageError(f"topic {topic!r} names unknown entities: {missing}")
    for topic, first, last, _, days in PERIODS:
        if topic not in TOPICS or days not in ("work", "weekend", "tuesday", "all"):
            raise UsageError(f"period {topic!r}: unknown topic or day pattern {days!r}")
        if not FIRST_DAY <= _day(first) <= _day(last) <= END.date():
            raise UsageError(f"period {topic!r} {first}..{last} is outside {FIRST_DAY}..{END.date()}")
    for day, topic, _, _, _ in BURSTS:
        if topic not in TOPICS or not FIRST_DAY <= _day(day) <= END.date():
            raise UsageError(f"burst {day} {topic!r}: unknown topic or day out of range")


def generate(created: dict[str, datetime]) -> list[dict[str, object]]:
    """Sessions ``{"at": ISO UTC, "accessed": [names]}`` sorted by time, none after :data:`END`.

    ``created`` maps every entity name to its creation time; an entity is never accessed before it.
    Raises UsageError when a table names an unknown entity or topic.
    """
    _check_tables(created)
    rng = random.Random(SEED)
    sessions: list[tuple[datetime, list[str]]] = []
    for topic, first, last, (rate_a, rate_b), days in PERIODS:
        start, stop = _day(first), _day(last)
        span = max((stop - start).days, 1)
        for offset in range(span + 1):
            day = start + timedelta(days=offset)
            rate = rate_a + (rate_b - rate_a) * offset / span
            count = _poisson(rng, rate * _per_day(days, day))
            for _ in range(0 if _quiet(day, topic) else count):
                sessions.append((_moment(rng, day, days), _pick(rng, TOPICS[topic])))
    for day, topic, count, low, high in BURSTS:
        base = datetime.combine(_day(day), datetime.min.time(), UTC)
        for _ in range(count):
            sessions.append((base + timedelta(seconds=rng.uniform(low, high) * 3600), _pick(rng, TOPICS[topic])))
    events = []
    for moment, names in sorted(sessions, key=lambda s: (s[0], s[1])):
        names = [n for n in names if created[n] <= moment]
        if names and moment <= END:
            events.append({"at": moment.strftime("%Y-%m-%dT%H:%M:%SZ"), "accessed": names})
    return events
