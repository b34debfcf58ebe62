"""Ground elevation from pvlib's global altitude grid, held in memory.

``pvlib/data/Altitude.h5`` (Mapzen/Joerd terrain aggregated to 5 arc-minutes: 2160 x 4320 cells,
uint8) is located without importing pvlib (a 1.4 s import) and read once with h5py (9 MB).
The index arithmetic and value decoding follow ``pvlib.location.lookup_altitude`` and
``pvlib.tools._degrees_to_index`` exactly: cell centres, half-even rounding, ``255`` = no data
-> 0 m, otherwise ``value * 28 - 450`` metres.
"""
from __future__ import annotations

import numpy as np

from pipeline.world import load_once, package_file, package_version

ROWS, COLS = 2160, 4320
_LAT_SCALE = ROWS / (-90 - 90)       # indices per degree, latitude runs 90 -> -90
_LAT_CENTER = 90 + 1 / _LAT_SCALE / 2
_LNG_SCALE = COLS / (180 - -180)
_LNG_CENTER = -180 + 1 / _LNG_SCALE / 2


def _index(degrees: float, scale: float, center: float, size: int, name: str) -> int:
    index = (degrees - center) * scale
    top = size - 1
    if index > top:
        if index - top <= 0.500001:
            return top
        raise ValueError(f"{name} {degrees} is out of range")
    if index < 0:
        if -index <= 0.500001:
            return 0
        raise ValueError(f"{name} {degrees} is out of range")
    return round(float(index))  # Python's round is half-even, like numpy.around


class ElevationGrid:
    def __init__(self) -> None:
        import h5py

        path = package_file("pvlib", "data", "Altitude.h5")
        with h5py.File(path, "r") as fh:
            self._grid = np.asarray(fh["Altitude"][()], dtype=np.uint8)
        # Decoded table for the 256 stored codes: 255 means no data, reported as 0 m like pvlib.
        self._metres = [0.0 if code == 255 else float(code * 28 - 450) for code in range(256)]
        self.source = (f"pvlib {package_version('pvlib')} Altitude.h5 global 5-arc-minute grid "
                       "(Mapzen terrain tiles; 28 m steps)")

    def elevation_m(self, lat: float, lng: float) -> float:
        row = _index(lat, _LAT_SCALE, _LAT_CENTER, ROWS, "latitude")
        col = _index(lng, _LNG_SCALE, _LNG_CENTER, COLS, "longitude")
        return self._metres[int(self._grid[row, col])]


@load_once
def elevation_grid() -> ElevationGrid:
    return ElevationGrid()


def elevation_at(lat: float, lng: float) -> float:
    """Ground elevation in metres at a point, from the grid's cell holding it: the figure
    ``maps_elevation`` (offline) answers, for enumerations that must not go through the tool."""
    return elevation_grid().elevation_m(lat, lng)
