//! HDFS path globs, one path component at a time (as Hadoop's Globber walks them): a
//! component without glob characters is looked up directly, one with them is matched
//! against the names a listing of its parent returns.

use crate::inputs::InputsError;

/// One `/`-separated component of an input path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Component {
    Literal(String),
    Glob(Pattern),
}

/// An absolute input path cut into components.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathPattern {
    pub components: Vec<Component>,
}

impl PathPattern {
    pub fn parse(path: &str) -> Result<PathPattern, InputsError> {
        if !path.starts_with('/') {
            return Err(InputsError::NotAbsolute(path.to_string()));
        }
        let mut components = Vec::new();
        for part in path.split('/').filter(|p| !p.is_empty()) {
            if part == "." || part == ".." {
                return Err(InputsError::BadGlob {
                    path: path.to_string(),
                    why: format!("component {part:?} is not allowed"),
                });
            }
            if part.contains(['*', '?', '[']) {
                let p = Pattern::parse(part).map_err(|why| InputsError::BadGlob {
                    path: path.to_string(),
                    why,
                })?;
                components.push(Component::Glob(p));
            } else {
                components.push(Component::Literal(part.to_string()));
            }
        }
        Ok(PathPattern { components })
    }

    /// True when no component is a glob: the path names one file or folder.
    pub fn is_literal(&self) -> bool {
        self.components
            .iter()
            .all(|c| matches!(c, Component::Literal(_)))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Char(char),
    Any,
    AnyRun,
    /// `[...]`: ranges (a single char is `(c, c)`), negated with `!` or `^`.
    Class {
        ranges: Vec<(char, char)>,
        negated: bool,
    },
}

/// A glob over one path component: `*` (any run), `?` (one char), `[abc]`, `[a-z]`,
/// `[!abc]`, and `\` to escape the next char.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    pieces: Vec<Piece>,
}

impl Pattern {
    pub fn parse(text: &str) -> Result<Pattern, String> {
        let mut pieces = Vec::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '*' => {
                    if pieces.last() != Some(&Piece::AnyRun) {
                        pieces.push(Piece::AnyRun);
                    }
                }
                '?' => pieces.push(Piece::Any),
                '\\' => match chars.next() {
                    Some(e) => pieces.push(Piece::Char(e)),
                    None => return Err("ends in a lone `\\`".into()),
                },
                '[' => {
                    let negated = matches!(chars.peek(), Some('!' | '^'));
                    if negated {
                        chars.next();
                    }
                    let mut ranges = Vec::new();
                    let mut closed = false;
                    while let Some(c) = chars.next() {
                        if c == ']' && !ranges.is_empty() {
                            closed = true;
                            break;
                        }
                        let lo = if c == '\\' {
                            chars.next().ok_or("ends in a lone `\\`")?
                        } else {
                            c
                        };
                        if chars.peek() == Some(&'-') {
                            chars.next();
                            match chars.next() {
                                Some(']') => {
                                    ranges.push((lo, lo));
                                    ranges.push(('-', '-'));
                                    closed = true;
                                    break;
                                }
                                Some(hi) if hi >= lo => ranges.push((lo, hi)),
                                Some(hi) => return Err(format!("range `{lo}-{hi}` is reversed")),
                                None => break,
                            }
                        } else {
                            ranges.push((lo, lo));
                        }
                    }
                    if !closed {
                        return Err("has a `[` without its `]`".into());
                    }
                    pieces.push(Piece::Class { ranges, negated });
                }
                c => pieces.push(Piece::Char(c)),
            }
        }
        Ok(Pattern { pieces })
    }

    /// Whether `name` (one component, no `/`) matches. Iterative with one backtrack point
    /// per `*`, so time is O(len(name) * len(pattern)) at worst.
    pub fn matches(&self, name: &str) -> bool {
        let s: Vec<char> = name.chars().collect();
        let t = &self.pieces;
        let (mut si, mut ti) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while si < s.len() {
            if ti < t.len() {
                let one = match &t[ti] {
                    Piece::Char(c) => *c == s[si],
                    Piece::Any => true,
                    Piece::Class { ranges, negated } => {
                        ranges.iter().any(|&(lo, hi)| lo <= s[si] && s[si] <= hi) != *negated
                    }
                    Piece::AnyRun => {
                        star = Some((ti, si));
                        ti += 1;
                        continue;
                    }
                };
                if one {
                    si += 1;
                    ti += 1;
                    continue;
                }
            }
            match star {
                Some((st, ss)) => {
                    ti = st + 1;
                    si = ss + 1;
                    star = Some((st, ss + 1));
                }
                None => return false,
            }
        }
        t[ti..].iter().all(|x| *x == Piece::AnyRun)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        Pattern::parse(p).unwrap().matches(s)
    }

    #[test]
    fn globs_match_like_the_shell() {
        assert!(m("*.txt", "a.txt"));
        assert!(m("*.txt", ".txt"));
        assert!(!m("*.txt", "a.txt.gz"));
        assert!(m("part-?", "part-1"));
        assert!(!m("part-?", "part-10"));
        assert!(m("part-[0-4]", "part-3"));
        assert!(!m("part-[0-4]", "part-5"));
        assert!(m("part-[!0-4]", "part-5"));
        assert!(m("[ab]*[cd]", "axxd"));
        assert!(!m("[ab]*[cd]", "axxe"));
        assert!(m("a\\*", "a*"));
        assert!(!m("a\\*", "ab"));
        assert!(m("*a*a*a*", "aaa"));
        assert!(!m("*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
        assert!(m("[a-]", "-"));
    }

    #[test]
    fn bad_globs_are_refused_with_the_reason() {
        assert!(Pattern::parse("[abc")
            .unwrap_err()
            .contains("without its `]`"));
        assert!(Pattern::parse("[z-a]").unwrap_err().contains("reversed"));
        assert!(Pattern::parse("a\\").is_err());
        assert!(matches!(
            PathPattern::parse("data/*"),
            Err(InputsError::NotAbsolute(_))
        ));
        assert!(matches!(
            PathPattern::parse("/data/../x"),
            Err(InputsError::BadGlob { .. })
        ));
    }

    #[test]
    fn paths_split_into_literal_and_glob_components() {
        let p = PathPattern::parse("/data//gen/part-*").unwrap();
        assert_eq!(p.components.len(), 3);
        assert_eq!(p.components[0], Component::Literal("data".into()));
        assert!(matches!(p.components[2], Component::Glob(_)));
        assert!(!p.is_literal());
        assert!(PathPattern::parse("/a/b").unwrap().is_literal());
    }
}
