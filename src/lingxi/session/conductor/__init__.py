"""The session conductor: everything around a machine, once, for every driver.

See :mod:`lingxi.session.conductor.conductor` for the lifecycle it owns and
:mod:`lingxi.session.conductor.actions` for what it asks a driver to do.
"""

from lingxi.session.conductor.actions import DriverAction, Emitted, Refuse, SendFrame, run_compute
from lingxi.session.conductor.conductor import SETTLED, Conductor, Settlement

__all__ = ["SETTLED", "Conductor", "DriverAction", "Emitted", "Refuse", "SendFrame",
           "Settlement", "run_compute"]
