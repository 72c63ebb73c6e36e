"""The books a library owns and which of them are on the shelf."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Book:
    isbn: str
    title: str
    author: str


@dataclass
class Catalog:
    books: dict[str, Book] = field(default_factory=dict)
    on_loan: set[str] = field(default_factory=set)

    def add(self, book: Book) -> None:
        self.books[book.isbn] = book

    def find(self, words: str) -> list[Book]:
        """Books whose title or author holds every word (case-insensitive)."""
        wanted = words.lower().split()
        return [
            b
            for b in self.books.values()
            if all(w in f"{b.title} {b.author}".lower() for w in wanted)
        ]

    def available(self, isbn: str) -> bool:
        return isbn in self.books and isbn not in self.on_loan
