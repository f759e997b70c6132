//! `sasl.jaas.config`: the login module and its options, as the Java client reads them.

use crate::security::Secret;

use super::value::Value;
use super::Result;

/// What a `sasl.jaas.config` says.
pub(super) enum Jaas {
    /// `PlainLoginModule` or `ScramLoginModule` with `username` and `password`.
    Credentials { username: String, password: Secret },
    /// `OAuthBearerLoginModule` without options (the token comes from kseek's own
    /// properties).
    OAuthBearer,
}

/// Parses a JAAS login configuration entry, the form `sasl.jaas.config` takes:
/// `<LoginModule class> <flag> [<option>=<value> ...];`, values quoted (`"..."` or `'...'`,
/// with `\` escapes) or bare, `//` and `/* */` comments allowed. Exactly one module, as Kafka
/// requires. Errors never show option values.
pub(super) fn parse_jaas(v: &Value) -> Result<Jaas> {
    let syntax = |reason: &str| v.unsupported(format!("not a JAAS configuration: {reason}"));
    let tokens = jaas_tokens(&v.text).map_err(syntax)?;
    let mut tokens = tokens.into_iter();
    let Some(JaasToken::Word(module)) = tokens.next() else {
        return Err(syntax("expected a login module class first"));
    };
    let Some(JaasToken::Word(flag)) = tokens.next() else {
        return Err(syntax(
            "expected a control flag (required) after the login module",
        ));
    };
    if !["required", "requisite", "sufficient", "optional"]
        .contains(&flag.to_ascii_lowercase().as_str())
    {
        return Err(syntax(
            "the control flag after the login module must be required, requisite, sufficient or optional",
        ));
    }
    let mut options: Vec<(String, String)> = Vec::new();
    loop {
        match tokens.next() {
            Some(JaasToken::Semicolon) => break,
            Some(JaasToken::Word(key)) => {
                if tokens.next() != Some(JaasToken::Equals) {
                    return Err(syntax(&format!("expected = after option {key:?}")));
                }
                match tokens.next() {
                    Some(JaasToken::Word(value) | JaasToken::Quoted(value)) => {
                        options.push((key, value))
                    }
                    _ => return Err(syntax(&format!("expected a value after {key}="))),
                }
            }
            None => return Err(syntax("missing the closing ';'")),
            Some(_) => return Err(syntax("expected an option name=value or ';'")),
        }
    }
    if tokens.next().is_some() {
        return Err(syntax(
            "more than one login module; Kafka's sasl.jaas.config takes exactly one",
        ));
    }

    let class = module.rsplit('.').next().unwrap_or_default();
    match class {
        "PlainLoginModule" | "ScramLoginModule" => {
            let (mut username, mut password) = (None, None);
            for (key, value) in options {
                match key.as_str() {
                    "username" => username = Some(value),
                    "password" => password = Some(Secret::new(value)),
                    "tokenauth" => {
                        return Err(v.unsupported(
                            "delegation tokens (tokenauth) are not supported",
                        ))
                    }
                    _ => {
                        return Err(v.unsupported(format!(
                            "{class} option {key:?} is not supported (only username and password)"
                        )))
                    }
                }
            }
            let username = username
                .filter(|u| !u.is_empty())
                .ok_or_else(|| v.unsupported(format!("{class} has no username")))?;
            let password = password
                .filter(|p| !p.expose().is_empty())
                .ok_or_else(|| v.unsupported(format!("{class} has no password")))?;
            Ok(Jaas::Credentials { username, password })
        }
        "OAuthBearerLoginModule" => match options.first() {
            None => Ok(Jaas::OAuthBearer),
            Some((key, _)) => Err(v.unsupported(format!(
                "OAuthBearerLoginModule option {key:?} is not supported; give the token with sasl.oauthbearer.token or sasl.oauthbearer.token.command"
            ))),
        },
        "Krb5LoginModule" => Err(v.unsupported("Kerberos (Krb5LoginModule, GSSAPI) is not supported")),
        "IAMLoginModule" => Err(v.unsupported(
            "AWS IAM authentication (IAMLoginModule) is not supported; on MSK use SCRAM-SHA-512 or mTLS",
        )),
        _ => Err(v.unsupported(format!(
            "login module {module:?} is not supported (PlainLoginModule, ScramLoginModule or OAuthBearerLoginModule)"
        ))),
    }
}

#[derive(Debug, PartialEq, Eq)]
pub(super) enum JaasToken {
    Word(String),
    Quoted(String),
    Equals,
    Semicolon,
}

pub(super) fn jaas_tokens(text: &str) -> std::result::Result<Vec<JaasToken>, &'static str> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut previous = ' ';
                loop {
                    match chars.next() {
                        None => return Err("a /* comment is not closed"),
                        Some('/') if previous == '*' => break,
                        Some(c) => previous = c,
                    }
                }
            }
            '=' => tokens.push(JaasToken::Equals),
            ';' => tokens.push(JaasToken::Semicolon),
            '"' | '\'' => {
                let quote = c;
                let mut value = String::new();
                loop {
                    match chars.next() {
                        None => return Err("a quoted value is not closed"),
                        Some(c) if c == quote => break,
                        Some('\\') => match chars.next() {
                            None => return Err("a quoted value is not closed"),
                            Some('n') => value.push('\n'),
                            Some('t') => value.push('\t'),
                            Some('r') => value.push('\r'),
                            Some('b') => value.push('\u{8}'),
                            Some('f') => value.push('\u{c}'),
                            Some(other) => value.push(other),
                        },
                        Some(c) => value.push(c),
                    }
                }
                tokens.push(JaasToken::Quoted(value));
            }
            c => {
                let mut word = String::from(c);
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || matches!(c, '=' | ';' | '"' | '\'') {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                tokens.push(JaasToken::Word(word));
            }
        }
    }
    Ok(tokens)
}
