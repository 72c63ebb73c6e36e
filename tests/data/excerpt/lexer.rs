//! A small lexer for arithmetic expressions: numbers, identifiers, operators, parens.

use std::fmt;
use std::iter::Peekable;
use std::str::Chars;

#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    Number(f64),
    Ident(String),
    Op(char),
    LParen,
    RParen,
}

#[derive(Debug, PartialEq)]
pub struct LexError {
    pub offset: usize,
    pub found: char,
}

impl fmt::Display for LexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unexpected {:?} at offset {}", self.found, self.offset)
    }
}

pub struct Lexer<'a> {
    chars: Peekable<Chars<'a>>,
    offset: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(input: &'a str) -> Self {
        Lexer { chars: input.chars().peekable(), offset: 0 }
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        self.offset += c.len_utf8();
        Some(c)
    }

    fn read_number(&mut self, first: char) -> Token {
        let mut text = String::from(first);
        while let Some(&c) = self.chars.peek() {
            if c.is_ascii_digit() || c == '.' {
                text.push(c);
                self.bump();
            } else {
                break;
            }
        }
        Token::Number(text.parse().unwrap_or(0.0))
    }

    pub fn next_token(&mut self) -> Result<Option<Token>, LexError> {
        while let Some(&c) = self.chars.peek() {
            if !c.is_whitespace() {
                break;
            }
            self.bump();
        }
        let start = self.offset;
        let c = match self.bump() {
            Some(c) => c,
            None => return Ok(None),
        };
        let token = match c {
            '0'..='9' => self.read_number(c),
            'a'..='z' | 'A'..='Z' | '_' => {
                let mut name = String::from(c);
                while let Some(&n) = self.chars.peek() {
                    if n.is_alphanumeric() || n == '_' {
                        name.push(n);
                        self.bump();
                    } else {
                        break;
                    }
                }
                Token::Ident(name)
            }
            '+' | '-' | '*' | '/' | '^' => Token::Op(c),
            '(' => Token::LParen,
            ')' => Token::RParen,
            other => return Err(LexError { offset: start, found: other }),
        };
        Ok(Some(token))
    }
}

pub fn tokenize(input: &str) -> Result<Vec<Token>, LexError> {
    let mut lexer = Lexer::new(input);
    let mut out = Vec::new();
    while let Some(t) = lexer.next_token()? {
        out.push(t);
    }
    Ok(out)
}
