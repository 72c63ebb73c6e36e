package demo.parse

import scala.util.Try

/** A parser: "class Fake" in a doc comment. */
trait Parser[A] {
  def parse(input: String): Option[A]
  def map[B](f: A => B): Parser[B] = (s: String) => parse(s).map(f)
}

case class Token(text: String, at: Int)

class Lexer(source: String) extends Iterator[Token] {
  private var pos = 0
  def hasNext: Boolean = pos < source.length
  def next(): Token = {
    val s = "def notADef() = 1"
    Token(s, pos)
  }
}

object Parser {
  type Result[A] = Either[String, A]
  def int: Parser[Int] = (s: String) => Try(s.toInt).toOption
}

enum Color {
  case Red, Green
}

val maxDepth = 64

def parseAll(s: String): List[Token] = new Lexer(s).toList
