//! Probe descriptions: splitting `provider:module:function:name`, expanding
//! macro arguments in them, and DTrace's glob matching (`* ? [...] \`).

use super::Probe;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProbeDesc {
    pub provider: String,
    pub module: String,
    pub function: String,
    pub name: String,
}

impl ProbeDesc {
    /// Splits a description; fewer than four fields are right-aligned, so
    /// `BEGIN` is the name and `read:entry` the function and name.
    pub(crate) fn parse(text: &str) -> Result<ProbeDesc, String> {
        let fields: Vec<&str> = text.split(':').collect();
        if fields.len() > 4 {
            return Err(format!("invalid probe description \"{text}\": Overspecified probe description"));
        }
        let mut all = vec![""; 4 - fields.len()];
        all.extend(fields);
        Ok(ProbeDesc {
            provider: all[0].to_string(),
            module: all[1].to_string(),
            function: all[2].to_string(),
            name: all[3].to_string(),
        })
    }

    pub(crate) fn matches(&self, probe: &Probe) -> bool {
        glob_match(&self.provider, probe.provider)
            && glob_match(&self.module, &probe.module)
            && glob_match(&self.function, &probe.function)
            && glob_match(&self.name, &probe.name)
    }

    pub(crate) fn name_is_literal(&self) -> bool {
        is_literal(&self.name)
    }

    pub(crate) fn function_is_literal(&self) -> bool {
        is_literal(&self.function)
    }

    pub(crate) fn module_is_literal(&self) -> bool {
        is_literal(&self.module)
    }

    pub(crate) fn provider_is_literal(&self) -> bool {
        is_literal(&self.provider)
    }

    pub(crate) fn could_match_provider(&self, provider: &str) -> bool {
        glob_match(&self.provider, provider)
    }
}

/// A process's provider name: `python1234` → ("python", Some(1234));
/// `python` → ("python", None).
pub(crate) fn split_pid(provider: &str) -> (&str, Option<u32>) {
    let digits = provider.len() - provider.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits == provider.len() {
        return (provider, None);
    }
    let (prefix, number) = provider.split_at(provider.len() - digits);
    match number.parse() {
        Ok(pid) => (prefix, Some(pid)),
        Err(_) => (provider, None),
    }
}

fn is_literal(field: &str) -> bool {
    !field.is_empty() && !field.contains(['*', '?', '[', '\\'])
}

/// The value of a D macro variable (`$pid`, `$target`, ...): the dtrace
/// process's own IDs, and the -c/-p process as `$target` (0 without one, as
/// in DTrace). Linux has no projects or tasks: `$projid` and `$taskid` are 0.
pub(crate) fn macro_variable(name: &str, target: Option<u32>) -> Option<u64> {
    // SAFETY: these calls have no preconditions and cannot fail.
    let value = unsafe {
        match name {
            "pid" => libc::getpid() as u64,
            "ppid" => libc::getppid() as u64,
            "uid" => libc::getuid() as u64,
            "euid" => libc::geteuid() as u64,
            "gid" => libc::getgid() as u64,
            "egid" => libc::getegid() as u64,
            "pgid" => libc::getpgid(0) as u64,
            "sid" => libc::getsid(0) as u64,
            "projid" | "taskid" => 0,
            "target" => target.unwrap_or(0) as u64,
            _ => return None,
        }
    };
    Some(value)
}

/// Replaces `$1`.., `$target`, `$pid` in a probe description with their
/// values, as DTrace does before matching (`tick-$1`, `pid$target`).
pub(crate) fn expand_macros(
    text: &str,
    args: &[String],
    macro_var: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        let len = after.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
        let word = &after[..len];
        if word.is_empty() {
            return Err(format!("invalid probe description \"{text}\""));
        }
        if word.bytes().all(|b| b.is_ascii_digit()) {
            let n: usize = word.parse().map_err(|_| format!("macro argument ${word} is out of range"))?;
            match args.get(n) {
                Some(value) => out.push_str(value),
                None => return Err(format!("macro argument ${n} is not defined")),
            }
        } else {
            match macro_var(word) {
                Some(value) => out.push_str(&value),
                None => return Err(format!("failed to resolve ${word}: Unknown variable name")),
            }
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Shell-style match as DTrace's gmatch(): `*`, `?`, `[a-z]`, `[!x]`, `\`
/// escapes. An empty pattern matches everything.
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    pattern.is_empty() || glob(pattern.as_bytes(), text.as_bytes())
}

fn glob(p: &[u8], t: &[u8]) -> bool {
    let (mut pi, mut ti) = (0, 0);
    // Backtracking point for the last `*`: (pattern index after it, text index).
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() {
            match p[pi] {
                b'*' => {
                    star = Some((pi + 1, ti));
                    pi += 1;
                    continue;
                }
                b'?' => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                b'[' => {
                    if let Some((matched, next)) = class_match(&p[pi..], t[ti]) {
                        if matched {
                            pi += next;
                            ti += 1;
                            continue;
                        }
                    } else if t[ti] == b'[' {
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                }
                b'\\' if pi + 1 < p.len() && p[pi + 1] == t[ti] => {
                    pi += 2;
                    ti += 1;
                    continue;
                }
                b'\\' if pi + 1 < p.len() => {}
                c if c == t[ti] => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, st)) => {
                pi = sp;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// Matches a `[...]` class at the start of `p`; returns (matched, length of
/// the class in the pattern), or None if the class is not closed.
fn class_match(p: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(p.get(i), Some(b'!') | Some(b'^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < p.len() {
        if p[i] == b']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if i + 2 < p.len() && p[i + 1] == b'-' && p[i + 2] != b']' {
            if p[i] <= c && c <= p[i + 2] {
                matched = true;
            }
            i += 3;
        } else {
            if p[i] == c {
                matched = true;
            }
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_desc_fields_are_right_aligned() {
        let d = ProbeDesc::parse("BEGIN").unwrap();
        assert_eq!((d.provider.as_str(), d.name.as_str()), ("", "BEGIN"));
        let d = ProbeDesc::parse("read:entry").unwrap();
        assert_eq!((d.function.as_str(), d.name.as_str()), ("read", "entry"));
        let d = ProbeDesc::parse("syscall::open*:entry").unwrap();
        assert_eq!(d.provider, "syscall");
        assert_eq!(d.module, "");
        assert!(ProbeDesc::parse("a:b:c:d:e").is_err());
    }

    #[test]
    fn providers_name_a_pid() {
        assert_eq!(split_pid("python1234"), ("python", Some(1234)));
        assert_eq!(split_pid("python"), ("python", None));
        assert_eq!(split_pid("1234"), ("1234", None));
        assert_eq!(split_pid("py*42"), ("py*", Some(42)));
    }

    #[test]
    fn glob_follows_gmatch() {
        assert!(glob_match("open*", "openat"));
        assert!(glob_match("open*", "open"));
        assert!(!glob_match("open*", "close"));
        assert!(glob_match("*at", "openat"));
        assert!(glob_match("[rw]*", "read"));
        assert!(glob_match("[rw]*", "write"));
        assert!(!glob_match("[rw]*", "open"));
        assert!(glob_match("[!r]*", "open"));
        assert!(glob_match("re?d", "read"));
        assert!(glob_match("", "anything"));
        assert!(glob_match("a\\*", "a*"));
        assert!(!glob_match("a\\*", "ab"));
        assert!(glob_match("*e*e*", "wakeup_preempt"));
        assert!(glob_match("[a-c]x", "bx"));
    }

    #[test]
    fn macros_expand_in_descriptions() {
        let args = vec!["x.d".to_string(), "2sec".to_string()];
        let vars = |w: &str| (w == "target").then(|| "42".to_string());
        assert_eq!(expand_macros("tick-$1", &args, &vars).unwrap(), "tick-2sec");
        assert_eq!(expand_macros("pid$target:libc::entry", &args, &vars).unwrap(), "pid42:libc::entry");
        assert!(expand_macros("tick-$2", &args, &vars).is_err());
    }
}
