"""Mental poker: fair two-party card games with hidden hands and no dealer.

Pure (no I/O, no clocks, entropy injected), built on libsodium: ristretto255
points (cards.sodium), PyNaCl's scalars and Ed25519 signatures. See docs/mental-poker.md for the construction.
"""

from lingxi.cards.audit import AuditReport, audit, verify_receipt
from lingxi.cards.errors import CODES, CardsError
from lingxi.cards.party import Checked, MentalPokerParty, PreparedShuffle
from lingxi.cards.table import Deal, Params, Table

__all__ = ["CODES", "AuditReport", "CardsError", "Checked", "Deal", "MentalPokerParty",
           "Params", "PreparedShuffle", "Table", "audit", "verify_receipt"]
