//! The subset of Python literal syntax that `.npy` headers are written in: dicts,
//! tuples, lists, strings, integers, `True`, `False` and `None`.
//!
//! numpy reads headers with `ast.literal_eval`; this parser accepts what numpy (any
//! version) writes, with a nesting limit so that hostile input cannot exhaust the stack.

/// Deepest nesting of containers accepted.
const MAX_DEPTH: usize = 32;

/// A parsed literal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// A string literal (escapes resolved; bytes outside UTF-8 replaced).
    Str(String),
    /// An integer literal.
    Int(i128),
    /// `True` or `False`.
    Bool(bool),
    /// `None`.
    None,
    /// A tuple or a list (the header format does not distinguish them).
    Sequence(Vec<Value>),
    /// A dict, its entries in the order written.
    Dict(Vec<(Value, Value)>),
}

impl Value {
    /// A short word for the kind of value, for error messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Value::Str(_) => "a string",
            Value::Int(_) => "an integer",
            Value::Bool(_) => "a boolean",
            Value::None => "None",
            Value::Sequence(_) => "a tuple or list",
            Value::Dict(_) => "a dict",
        }
    }
}

/// Where and why parsing stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    /// Byte offset in the header text.
    pub offset: usize,
    /// What was expected there.
    pub message: &'static str,
}

/// Parses one literal that spans all of `text` (surrounding whitespace allowed).
pub(crate) fn parse(text: &[u8]) -> Result<Value, SyntaxError> {
    let mut parser = Parser { text, pos: 0 };
    let value = parser.value(0)?;
    parser.skip_space();
    if parser.pos != text.len() {
        return Err(parser.error("nothing after the closing '}'"));
    }
    Ok(value)
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, message: &'static str) -> SyntaxError {
        SyntaxError {
            offset: self.pos,
            message,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')) {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        self.skip_space();
        match self.peek() {
            None => Err(self.error("a value, but the text ended")),
            Some(b'{') => self.dict(depth),
            Some(b'(') => self.sequence(depth, b')'),
            Some(b'[') => self.sequence(depth, b']'),
            Some(b'\'' | b'"') => self.string().map(Value::Str),
            Some(b'u' | b'U' | b'b' | b'B')
                if matches!(self.text.get(self.pos + 1), Some(b'\'' | b'"')) =>
            {
                self.pos += 1;
                self.string().map(Value::Str)
            }
            Some(b'0'..=b'9' | b'-' | b'+') => self.integer().map(Value::Int),
            Some(c) if c.is_ascii_alphabetic() => self.word(),
            Some(_) => Err(self.error("a value (dict, tuple, list, string, integer or name)")),
        }
    }

    fn enter(&mut self, depth: usize) -> Result<usize, SyntaxError> {
        if depth >= MAX_DEPTH {
            return Err(self.error("less deeply nested containers"));
        }
        self.pos += 1;
        Ok(depth + 1)
    }

    fn dict(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        let depth = self.enter(depth)?;
        let mut entries = Vec::new();
        loop {
            self.skip_space();
            if self.peek() == Some(b'}') {
                self.pos += 1;
                return Ok(Value::Dict(entries));
            }
            let key = self.value(depth)?;
            self.skip_space();
            if self.peek() != Some(b':') {
                return Err(self.error("':' after a dict key"));
            }
            self.pos += 1;
            let value = self.value(depth)?;
            entries.push((key, value));
            self.skip_space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {}
                _ => return Err(self.error("',' or '}' after a dict entry")),
            }
        }
    }

    fn sequence(&mut self, depth: usize, close: u8) -> Result<Value, SyntaxError> {
        let depth = self.enter(depth)?;
        let mut items = Vec::new();
        loop {
            self.skip_space();
            if self.peek() == Some(close) {
                self.pos += 1;
                return Ok(Value::Sequence(items));
            }
            items.push(self.value(depth)?);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(c) if c == close => {}
                _ if close == b')' => return Err(self.error("',' or ')' after a tuple item")),
                _ => return Err(self.error("',' or ']' after a list item")),
            }
        }
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        let quote = self.text[self.pos];
        self.pos += 1;
        let mut bytes = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error("a closing quote, but the text ended"));
            };
            self.pos += 1;
            match c {
                b'\n' => return Err(self.error("a closing quote before the end of the line")),
                b'\\' => {
                    let Some(e) = self.peek() else {
                        return Err(self.error("an escaped character, but the text ended"));
                    };
                    self.pos += 1;
                    match e {
                        b'n' => bytes.push(b'\n'),
                        b't' => bytes.push(b'\t'),
                        b'r' => bytes.push(b'\r'),
                        b'0' => bytes.push(0),
                        b'\\' | b'\'' | b'"' => bytes.push(e),
                        b'\n' => {}
                        b'x' => match self.text.get(self.pos..self.pos + 2).and_then(hex_byte) {
                            Some(code) => {
                                self.pos += 2;
                                let mut utf8 = [0u8; 4];
                                bytes.extend_from_slice(
                                    char::from(code).encode_utf8(&mut utf8).as_bytes(),
                                );
                            }
                            None => return Err(self.error("two hexadecimal digits after \\x")),
                        },
                        other => bytes.extend_from_slice(&[b'\\', other]),
                    }
                }
                c if c == quote => break,
                c => bytes.push(c),
            }
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn integer(&mut self) -> Result<i128, SyntaxError> {
        let negative = match self.peek() {
            Some(b'-') => {
                self.pos += 1;
                true
            }
            Some(b'+') => {
                self.pos += 1;
                false
            }
            _ => false,
        };
        let start = self.pos;
        let mut value: i128 = 0;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(i128::from(c - b'0')))
                .ok_or_else(|| self.error("an integer of at most 38 digits"))?;
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.error("a digit"));
        }
        if matches!(self.peek(), Some(b'L' | b'l')) {
            self.pos += 1;
        }
        if matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == b'.' || c == b'_') {
            return Err(self.error("an integer (floats and other numbers are not allowed)"));
        }
        Ok(if negative { -value } else { value })
    }

    fn word(&mut self) -> Result<Value, SyntaxError> {
        let start = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == b'_') {
            self.pos += 1;
        }
        match &self.text[start..self.pos] {
            b"True" => Ok(Value::Bool(true)),
            b"False" => Ok(Value::Bool(false)),
            b"None" => Ok(Value::None),
            _ => {
                self.pos = start;
                Err(self.error("True, False or None (other names are not literals)"))
            }
        }
    }
}

fn hex_byte(digits: &[u8]) -> Option<u8> {
    let text = std::str::from_utf8(digits).ok()?;
    u8::from_str_radix(text, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Value {
        parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn numpy_header_dict() {
        let v = ok("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }    \n");
        assert_eq!(
            v,
            Value::Dict(vec![
                (Value::Str("descr".into()), Value::Str("<f4".into())),
                (Value::Str("fortran_order".into()), Value::Bool(false)),
                (
                    Value::Str("shape".into()),
                    Value::Sequence(vec![Value::Int(2), Value::Int(3)])
                ),
            ])
        );
    }

    #[test]
    fn tuples_strings_and_integers() {
        assert_eq!(ok("()"), Value::Sequence(vec![]));
        assert_eq!(ok("(5,)"), Value::Sequence(vec![Value::Int(5)]));
        assert_eq!(
            ok("[1L, -2]"),
            Value::Sequence(vec![Value::Int(1), Value::Int(-2)])
        );
        assert_eq!(ok(r#""a\"b\\c""#), Value::Str("a\"b\\c".into()));
        assert_eq!(ok("u'x'"), Value::Str("x".into()));
        assert_eq!(ok(r"'\x01\x9f'"), Value::Str("\u{1}\u{9f}".into()));
        assert!(parse(br"'\xZZ'").is_err());
        assert_eq!(ok("None"), Value::None);
    }

    #[test]
    fn errors_carry_offsets() {
        let err = parse(b"{'a' 1}").unwrap_err();
        assert_eq!(err.offset, 5);
        assert_eq!(err.message, "':' after a dict key");
        assert!(parse(b"{'a': 1.5}").is_err());
        assert!(parse(b"{'a': 1} x").is_err());
        assert!(parse(b"'unterminated").is_err());
        assert!(parse(b"nonsense").is_err());
        assert!(parse(b"").is_err());
        assert!(parse(b"99999999999999999999999999999999999999999").is_err());
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "(".repeat(10_000);
        let err = parse(deep.as_bytes()).unwrap_err();
        assert_eq!(err.message, "less deeply nested containers");
        let fine = format!("{}{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert!(parse(fine.as_bytes()).is_ok());
    }
}
