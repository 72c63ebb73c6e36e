// The lending desk over HTTP, as the web front end sees it.

export interface BookDto {
  isbn: string;
  title: string;
  author: string;
  available: boolean;
}

export type LoanDto = { isbn: string; member: string; due: string };

export class LendingClient {
  constructor(private readonly baseUrl: string) {}

  async search(words: string): Promise<BookDto[]> {
    const res = await fetch(`${this.baseUrl}/books?q=${encodeURIComponent(words)}`);
    return (await res.json()) as BookDto[];
  }

  async checkout(isbn: string, member: string): Promise<LoanDto> {
    const res = await fetch(`${this.baseUrl}/loans`, {
      method: "POST",
      body: JSON.stringify({ isbn, member }),
    });
    return (await res.json()) as LoanDto;
  }

  async returnBook(isbn: string): Promise<void> {
    await fetch(`${this.baseUrl}/loans/${isbn}`, { method: "DELETE" });
  }
}

export const dueLabel = (loan: LoanDto): string => `due ${loan.due.slice(0, 10)}`;
