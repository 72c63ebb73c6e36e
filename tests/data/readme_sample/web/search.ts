// The search box: finds books and lends the chosen one.
import { BookDto, LendingClient, dueLabel } from "./api";

export async function searchAndLend(client: LendingClient, words: string, member: string) {
  const books: BookDto[] = await client.search(words);
  const first = books.find((b) => b.available);
  if (!first) return "nothing on the shelf";
  const loan = await client.checkout(first.isbn, member);
  return `${first.title}: ${dueLabel(loan)}`;
}
