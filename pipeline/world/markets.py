"""Stock and crypto prices: real daily OHLCV where a package ships it, seeded simulation elsewhere.

Real: ``bokeh_sampledata``'s ``stocks.csv.gz`` (AAPL, IBM, MSFT 2000-03-01..2013-03-01, GOOG from
2004-08-19, FB from 2012-05-18; unadjusted prices as quoted that day), read directly without
importing bokeh. A covered symbol on a date without a row is an error that names the nearest
trading days (no silent substitution); outside its range is an error naming the range.

Simulated (provenance ``simulated``): any other stock symbol, and every crypto symbol (no daily
crypto series ships in a package with a usable licence). Prices are smooth deterministic
functions of the date seeded by the symbol, plus a small daily term seeded by (symbol, date), so
every date answers consistently however it is asked. BTC and ETH follow rough yearly price
levels (order of magnitude, not history); other symbols get a seeded base price.
"""
from __future__ import annotations

import bisect
import csv
import datetime as dt
import gzip
import math
from dataclasses import dataclass

from pipeline.world import load_once, package_file, package_version
from pipeline.world.seeded import unit_for


@dataclass(frozen=True)
class DailyBar:
    date: str
    open: float
    high: float
    low: float
    close: float
    volume: float


class StockTable:
    def __init__(self) -> None:
        path = package_file("bokeh_sampledata", "_data", "stocks.csv.gz")
        self.source = (f"bokeh_sampledata {package_version('bokeh_sampledata')} stocks.csv.gz "
                       "(daily OHLCV, unadjusted)")
        self.bars: dict[str, dict[str, DailyBar]] = {}
        with gzip.open(path, "rt", encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh):
                bar = DailyBar(row["Date"], float(row["Open"]), float(row["High"]), float(row["Low"]),
                               float(row["Close"]), int(row["Volume"]))
                self.bars.setdefault(row["Ticker"].upper(), {})[bar.date] = bar
        self.dates = {symbol: sorted(bars) for symbol, bars in self.bars.items()}

    def covers(self, symbol: str) -> bool:
        return symbol in self.bars

    def bar(self, symbol: str, date: str) -> DailyBar:
        """The day's bar; ValueError (with the nearest trading days) when there is none."""
        bars = self.bars[symbol]
        if date in bars:
            return bars[date]
        dates = self.dates[symbol]
        if date < dates[0] or date > dates[-1]:
            raise ValueError(f"{symbol}: offline data covers {dates[0]} to {dates[-1]} only; no data for {date}")
        i = bisect.bisect_left(dates, date)
        raise ValueError(f"{symbol}: {date} was not a trading day (weekend or market holiday); "
                         f"previous trading day {dates[i - 1]}, next trading day {dates[i]}")


@load_once
def stock_table() -> StockTable:
    return StockTable()


# ----------------------------------------------------------------------------- simulation
SIM_SOURCE = "simulated: seeded deterministic price model (not market data)"

# Rough yearly price levels in USD (order of magnitude of each year's typical price).
CRYPTO_YEAR_LEVEL = {
    "BTC": {2010: 0.1, 2011: 5, 2012: 8, 2013: 150, 2014: 500, 2015: 270, 2016: 570, 2017: 4000, 2018: 7500,
            2019: 7400, 2020: 11000, 2021: 47000, 2022: 28000, 2023: 29000, 2024: 65000, 2025: 100000},
    "ETH": {2015: 1, 2016: 10, 2017: 300, 2018: 500, 2019: 180, 2020: 300, 2021: 2800, 2022: 1900, 2023: 1800,
            2024: 3000, 2025: 3000},
}
CRYPTO_LAUNCH = {"BTC": "2010-07-17", "ETH": "2015-08-07"}
CRYPTO_ALIASES = {"BITCOIN": "BTC", "XBT": "BTC", "ETHEREUM": "ETH", "BTC-USD": "BTC", "ETH-USD": "ETH",
                  "BTCUSD": "BTC", "ETHUSD": "ETH"}


def parse_date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a valid calendar date") from None


def _level_from_years(levels: dict[int, float], day: dt.date) -> float:
    """Log-linear interpolation between mid-year levels, flat beyond the ends."""
    t = day.year + (day.timetuple().tm_yday - 0.5) / 366 - 0.5
    years = sorted(levels)
    if t <= years[0]:
        return levels[years[0]]
    if t >= years[-1]:
        return levels[years[-1]]
    y0 = math.floor(t)
    f = t - y0
    return math.exp((1 - f) * math.log(levels[y0]) + f * math.log(levels[y0 + 1]))


def _wiggle(kind: str, symbol: str, day: dt.date, amplitude: float) -> float:
    """Smooth seeded multi-scale oscillation (log-price units), same value for the same day."""
    x = day.toordinal()
    total = 0.0
    for k, period in enumerate((365.0, 120.0, 37.0, 11.0)):
        phase = unit_for(kind, symbol, "phase", k) * 2 * math.pi
        total += amplitude / (k + 1) * math.sin(2 * math.pi * x / period + phase)
    return total


def simulated_bar(kind: str, symbol: str, day: dt.date) -> DailyBar:
    """A plausible, deterministic daily bar for a symbol without real data."""
    if kind == "crypto" and symbol in CRYPTO_YEAR_LEVEL:
        base = _level_from_years(CRYPTO_YEAR_LEVEL[symbol], day)
        amplitude, daily_vol, volume_turnover = 0.12, 0.035, 0.02
    elif kind == "crypto":
        base = 10 ** (-2 + 4 * unit_for(kind, symbol, "base"))
        amplitude, daily_vol, volume_turnover = 0.15, 0.05, 0.05
    else:
        years = (day.toordinal() - dt.date(2000, 1, 1).toordinal()) / 365.25
        growth = 0.02 + 0.08 * unit_for(kind, symbol, "growth")
        base = (10 + 190 * unit_for(kind, symbol, "base")) * math.exp(growth * years)
        amplitude, daily_vol, volume_turnover = 0.08, 0.015, 0.0
    close = base * math.exp(_wiggle(kind, symbol, day, amplitude) + daily_vol * (unit_for(kind, symbol, day.isoformat(), "c") - 0.5) * 2)
    prev = base * math.exp(_wiggle(kind, symbol, day - dt.timedelta(days=1), amplitude))
    open_ = prev * math.exp(daily_vol * (unit_for(kind, symbol, day.isoformat(), "o") - 0.5))
    high = max(open_, close) * (1 + daily_vol * unit_for(kind, symbol, day.isoformat(), "h"))
    low = min(open_, close) * (1 - daily_vol * unit_for(kind, symbol, day.isoformat(), "l"))
    noise = 0.6 + 0.8 * unit_for(kind, symbol, day.isoformat(), "v")
    if kind == "crypto":
        scale = 2e10 if symbol == "BTC" else 1e10 if symbol == "ETH" else 1e8 * (0.1 + unit_for(kind, symbol, "vol"))
        volume = round(scale * (close / base) ** 0.5 * noise * (1 + volume_turnover), 2)
    else:
        volume = float(int(2e6 * (1 + 40 * unit_for(kind, symbol, "vol")) * noise))
    digits = 2 if close >= 1 else 6
    return DailyBar(day.isoformat(), round(open_, digits), round(high, digits), round(low, digits),
                    round(close, digits), volume)
