"""A 1D electrostatic particle-in-cell code: push markers, deposit charge, sort by cell."""
