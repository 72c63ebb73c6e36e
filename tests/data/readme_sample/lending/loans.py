"""Lending books out and taking them back, with due dates."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from lending.catalog import Book, Catalog

LOAN_DAYS = 21


class NotAvailable(Exception):
    """The book is unknown or already lent out."""


@dataclass
class Loan:
    book: Book
    member: str
    due: date

    def overdue(self, today: date) -> bool:
        return today > self.due


class LoanDesk:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.loans: dict[str, Loan] = {}

    def checkout(self, isbn: str, member: str, today: date) -> Loan:
        if not self.catalog.available(isbn):
            raise NotAvailable(isbn)
        loan = Loan(self.catalog.books[isbn], member, today + timedelta(days=LOAN_DAYS))
        self.catalog.on_loan.add(isbn)
        self.loans[isbn] = loan
        return loan

    def return_book(self, isbn: str) -> None:
        self.loans.pop(isbn, None)
        self.catalog.on_loan.discard(isbn)

    def overdue(self, today: date) -> list[Loan]:
        return [loan for loan in self.loans.values() if loan.overdue(today)]
