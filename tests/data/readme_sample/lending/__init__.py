"""A small lending library: the sample repository of ctxtools' README."""

from lending.catalog import Book, Catalog
from lending.loans import Loan, LoanDesk

__all__ = ["Book", "Catalog", "Loan", "LoanDesk"]
