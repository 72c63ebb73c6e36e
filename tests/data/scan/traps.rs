//! Crate docs: fn not_in_doc_comment() {}
use std::collections::HashMap;
use std::fmt::{self, Display};
extern crate alloc;

/* block comment /* nested fn not_nested() {} */ still comment fn nope() {} */

/// A store. `fn not_in_doc() {}`
#[derive(Debug, Clone)]
pub struct Store<T: Clone> {
    items: HashMap<String, T>,
}

pub struct Unit;

pub enum Event<'a> {
    Put { name: &'a str },
    Delete(String),
}

pub trait Backend: Send {
    type Error;
    const NAME: &'static str;
    fn get(&self, key: &str) -> Option<Vec<u8>>;
    fn put(&mut self, key: &str, value: &[u8]) -> Result<(), Self::Error> {
        let _ = (key, value);
        Ok(())
    }
}

impl<T: Clone> Store<T> {
    pub fn new() -> Self {
        fn helper() {}
        let s = r#"fn in_raw_string() { "quoted" }"#;
        let c = '{';
        let _ = (s, c);
        Store { items: HashMap::new() }
    }

    pub(crate) fn get<'a>(&'a self, key: &str) -> Option<&'a T> {
        self.items.get(key)
    }
}

impl<T: Clone + fmt::Debug> Display for Store<T>
where
    T: Send,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.items.len())
    }
}

impl Backend for [u8; 4] {
    type Error = ();
    const NAME: &'static str = "array";
    fn get(&self, _key: &str) -> Option<Vec<u8>> {
        None
    }
}

pub const LIMIT: usize = 1 << 20;
static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
pub type Map = HashMap<String, Vec<u8>>;

pub async fn fetch<F: Fn() -> u8>(f: F) -> u8 {
    f()
}

pub const fn double(x: usize) -> usize {
    x * 2
}

macro_rules! make {
    () => {
        fn generated() {}
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_works() {
        assert_eq!(double(2), 4);
    }
}
