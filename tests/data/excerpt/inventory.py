"""Inventory bookkeeping for the warehouse service.

Stock moves are recorded in a ledger; every product's quantity on hand is the sum of
its moves. The functions here are small on purpose: each does one thing to the ledger.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import defaultdict
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Move:
    sku: str
    quantity: int
    reason: str
    at: dt.datetime


@dataclass
class Ledger:
    moves: list[Move] = field(default_factory=list)

    def record(self, move: Move) -> None:
        self.moves.append(move)

    def on_hand(self, sku: str) -> int:
        return sum(m.quantity for m in self.moves if m.sku == sku)


def receive_shipment(ledger: Ledger, sku: str, quantity: int, supplier: str) -> Move:
    """A shipment arrives: every line adds stock."""
    if quantity <= 0:
        raise ValueError("quantity must be positive")
    move = Move(sku, quantity, "receive_shipment:" + supplier, dt.datetime.now(dt.UTC))
    ledger.record(move)
    log.info("%s %s x%d (%s)", "receive_shipment", sku, quantity, supplier)
    return move


def receive_shipment_summary(moves: list[Move]) -> dict[str, int]:
    """Quantities per SKU of the receive shipment moves."""
    totals: dict[str, int] = defaultdict(int)
    for move in moves:
        if move.reason.startswith("receive_shipment:"):
            totals[move.sku] += move.quantity
    return dict(sorted(totals.items()))


def check_receive_shipment_limits(quantity: int, limit: int = 10_000) -> bool:
    """Large receive shipment moves need a second pair of eyes."""
    if quantity > limit:
        log.warning("%s of %d needs approval", "receive_shipment", quantity)
        return False
    return True


def ship_order(ledger: Ledger, sku: str, quantity: int, customer: str) -> Move:
    """An order leaves: every line removes stock."""
    if quantity <= 0:
        raise ValueError("quantity must be positive")
    move = Move(sku, -quantity, "ship_order:" + customer, dt.datetime.now(dt.UTC))
    ledger.record(move)
    log.info("%s %s x%d (%s)", "ship_order", sku, quantity, customer)
    return move


def ship_order_summary(moves: list[Move]) -> dict[str, int]:
    """Quantities per SKU of the ship order moves."""
    totals: dict[str, int] = defaultdict(int)
    for move in moves:
        if move.reason.startswith("ship_order:"):
            totals[move.sku] += move.quantity
    return dict(sorted(totals.items()))


def check_ship_order_limits(quantity: int, limit: int = 10_000) -> bool:
    """Large ship order moves need a second pair of eyes."""
    if quantity > limit:
        log.warning("%s of %d needs approval", "ship_order", quantity)
        return False
    return True


def return_item(ledger: Ledger, sku: str, quantity: int, customer: str) -> Move:
    """A customer sends an item back."""
    if quantity <= 0:
        raise ValueError("quantity must be positive")
    move = Move(sku, quantity, "return_item:" + customer, dt.datetime.now(dt.UTC))
    ledger.record(move)
    log.info("%s %s x%d (%s)", "return_item", sku, quantity, customer)
    return move


def return_item_summary(moves: list[Move]) -> dict[str, int]:
    """Quantities per SKU of the return item moves."""
    totals: dict[str, int] = defaultdict(int)
    for move in moves:
        if move.reason.startswith("return_item:"):
            totals[move.sku] += move.quantity
    return dict(sorted(totals.items()))


def check_return_item_limits(quantity: int, limit: int = 10_000) -> bool:
    """Large return item moves need a second pair of eyes."""
    if quantity > limit:
        log.warning("%s of %d needs approval", "return_item", quantity)
        return False
    return True


def write_off(ledger: Ledger, sku: str, quantity: int, damage: str) -> Move:
    """Damaged goods leave the books."""
    if quantity <= 0:
        raise ValueError("quantity must be positive")
    move = Move(sku, -quantity, "write_off:" + damage, dt.datetime.now(dt.UTC))
    ledger.record(move)
    log.info("%s %s x%d (%s)", "write_off", sku, quantity, damage)
    return move


def write_off_summary(moves: list[Move]) -> dict[str, int]:
    """Quantities per SKU of the write off moves."""
    totals: dict[str, int] = defaultdict(int)
    for move in moves:
        if move.reason.startswith("write_off:"):
            totals[move.sku] += move.quantity
    return dict(sorted(totals.items()))


def check_write_off_limits(quantity: int, limit: int = 10_000) -> bool:
    """Large write off moves need a second pair of eyes."""
    if quantity > limit:
        log.warning("%s of %d needs approval", "write_off", quantity)
        return False
    return True


def transfer_between_sites(ledger: Ledger, sku: str, quantity: int, site: str) -> Move:
    """Stock moves from one site to another."""
    if quantity <= 0:
        raise ValueError("quantity must be positive")
    move = Move(sku, quantity, "transfer_between_sites:" + site, dt.datetime.now(dt.UTC))
    ledger.record(move)
    log.info("%s %s x%d (%s)", "transfer_between_sites", sku, quantity, site)
    return move


def transfer_between_sites_summary(moves: list[Move]) -> dict[str, int]:
    """Quantities per SKU of the transfer between sites moves."""
    totals: dict[str, int] = defaultdict(int)
    for move in moves:
        if move.reason.startswith("transfer_between_sites:"):
            totals[move.sku] += move.quantity
    return dict(sorted(totals.items()))


def check_transfer_between_sites_limits(quantity: int, limit: int = 10_000) -> bool:
    """Large transfer between sites moves need a second pair of eyes."""
    if quantity > limit:
        log.warning("%s of %d needs approval", "transfer_between_sites", quantity)
        return False
    return True


def count_cycle(ledger: Ledger, sku: str, quantity: int, counter: str) -> Move:
    """A cycle count corrects drift."""
    if quantity <= 0:
        raise ValueError("quantity must be positive")
    move = Move(sku, quantity, "count_cycle:" + counter, dt.datetime.now(dt.UTC))
    ledger.record(move)
    log.info("%s %s x%d (%s)", "count_cycle", sku, quantity, counter)
    return move


def count_cycle_summary(moves: list[Move]) -> dict[str, int]:
    """Quantities per SKU of the count cycle moves."""
    totals: dict[str, int] = defaultdict(int)
    for move in moves:
        if move.reason.startswith("count_cycle:"):
            totals[move.sku] += move.quantity
    return dict(sorted(totals.items()))


def check_count_cycle_limits(quantity: int, limit: int = 10_000) -> bool:
    """Large count cycle moves need a second pair of eyes."""
    if quantity > limit:
        log.warning("%s of %d needs approval", "count_cycle", quantity)
        return False
    return True


def reserve_stock(ledger: Ledger, sku: str, quantity: int, order: str) -> Move:
    """Stock is held for an order not yet shipped."""
    if quantity <= 0:
        raise ValueError("quantity must be positive")
    move = Move(sku, -quantity, "reserve_stock:" + order, dt.datetime.now(dt.UTC))
    ledger.record(move)
    log.info("%s %s x%d (%s)", "reserve_stock", sku, quantity, order)
    return move


def reserve_stock_summary(moves: list[Move]) -> dict[str, int]:
    """Quantities per SKU of the reserve stock moves."""
    totals: dict[str, int] = defaultdict(int)
    for move in moves:
        if move.reason.startswith("reserve_stock:"):
            totals[move.sku] += move.quantity
    return dict(sorted(totals.items()))


def check_reserve_stock_limits(quantity: int, limit: int = 10_000) -> bool:
    """Large reserve stock moves need a second pair of eyes."""
    if quantity > limit:
        log.warning("%s of %d needs approval", "reserve_stock", quantity)
        return False
    return True


def release_reservation(ledger: Ledger, sku: str, quantity: int, order: str) -> Move:
    """A held quantity goes back to free stock."""
    if quantity <= 0:
        raise ValueError("quantity must be positive")
    move = Move(sku, quantity, "release_reservation:" + order, dt.datetime.now(dt.UTC))
    ledger.record(move)
    log.info("%s %s x%d (%s)", "release_reservation", sku, quantity, order)
    return move


def release_reservation_summary(moves: list[Move]) -> dict[str, int]:
    """Quantities per SKU of the release reservation moves."""
    totals: dict[str, int] = defaultdict(int)
    for move in moves:
        if move.reason.startswith("release_reservation:"):
            totals[move.sku] += move.quantity
    return dict(sorted(totals.items()))


def check_release_reservation_limits(quantity: int, limit: int = 10_000) -> bool:
    """Large release reservation moves need a second pair of eyes."""
    if quantity > limit:
        log.warning("%s of %d needs approval", "release_reservation", quantity)
        return False
    return True


def reconcile_stock(ledger: Ledger, counted: dict[str, int]) -> list[Move]:
    """Bring the ledger in line with a physical count.

    For every SKU whose counted quantity differs from the ledger's, record one
    correcting move, and return the moves recorded (sorted by SKU).
    """
    corrections = []
    now = dt.datetime.now(dt.UTC)
    for sku in sorted(counted):
        difference = counted[sku] - ledger.on_hand(sku)
        if difference:
            move = Move(sku, difference, "reconcile", now)
            ledger.record(move)
            corrections.append(move)
    if corrections:
        log.info("reconciled %d SKUs", len(corrections))
    return corrections


def report(ledger: Ledger) -> str:
    """One line per SKU: the quantity on hand."""
    skus = sorted({m.sku for m in ledger.moves})
    return "\n".join(f"{sku}\t{ledger.on_hand(sku)}" for sku in skus)
