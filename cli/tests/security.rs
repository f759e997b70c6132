//! The command line with users' own files: `--config client.properties` (Java names) and
//! kcat's `-F` file (librdkafka names), `-X` on top; one-line errors with exit 3 (Kafka) or 2
//! (settings), never a secret.
//!
//! Against the secured Kafka 4.4 broker of `tests/run` (TLS, SASL, ACLs; see
//! `tests/support/secure.rs`).
//!
//! Run with `cargo test -p kseek-cli --test security`.

#[path = "../../tests/support/mod.rs"]
mod support;

use std::process::Command;

use support::secure::{
    secure_broker, window_topic, ClientCert, Listener, Mechanism, SecureBroker, Trust, MINUTE, TEN,
};

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn kseek(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kseek"));
    cmd.args(args).env_remove("KSEEK_BOOTSTRAP");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn rfc3339(ms: i64) -> String {
    // 2026-01-01T10:00:00Z is TEN; the window is whole minutes after it.
    let minutes = (ms - TEN) / MINUTE;
    format!("2026-01-01T10:{minutes:02}:00Z")
}

fn window_args<'a>(topic: &'a str, from: &'a str, to: &'a str) -> Vec<&'a str> {
    vec![
        "read",
        "--topic",
        topic,
        "--from",
        from,
        "--to",
        to,
        "--format",
        "%p %o %s\n",
        "-q",
    ]
}

#[test]
fn read_with_a_client_properties_file_prints_exactly_the_window() {
    let broker = secure_broker();
    let (topic, written) = window_topic(broker);
    let (from, to) = (rfc3339(TEN), rfc3339(TEN + 5 * MINUTE));
    let mut expected: Vec<String> = written
        .iter()
        .filter(|r| (TEN..TEN + 5 * MINUTE).contains(&r.timestamp))
        .map(|r| {
            format!(
                "{} {} {}",
                r.partition,
                r.offset,
                String::from_utf8_lossy(r.value.as_deref().unwrap_or_default())
            )
        })
        .collect();
    expected.sort();
    for (spec, flag, librdkafka) in [
        (broker.client(Listener::SaslSsl), "--config", false),
        (
            broker.client(Listener::SaslSsl).mechanism(Mechanism::Plain),
            "-F",
            true,
        ),
        (broker.client(Listener::Ssl), "--config", false),
    ] {
        let file = if librdkafka {
            spec.write_librdkafka_properties()
        } else {
            spec.write_java_properties()
        };
        let file = file.display().to_string();
        let mut args = window_args(&topic, &from, &to);
        args.extend([flag, file.as_str()]);
        let run = kseek(&args, &[]);
        assert_eq!(run.code, Some(0), "{:?}: {}", spec.listener(), run.stderr);
        let mut got: Vec<String> = run.stdout.lines().map(str::to_owned).collect();
        got.sort();
        assert_eq!(got, expected, "{:?} {flag}", spec.listener());
        let _ = std::fs::remove_file(&file);
    }
}

/// A new window topic, its first five minutes as `--from`/`--to`, and how many records
/// they hold.
fn five_minutes(broker: &SecureBroker) -> (String, String, String, usize) {
    let (topic, written) = window_topic(broker);
    let expected = written
        .iter()
        .filter(|r| (TEN..TEN + 5 * MINUTE).contains(&r.timestamp))
        .count();
    (topic, rfc3339(TEN), rfc3339(TEN + 5 * MINUTE), expected)
}

/// A Java consumer's consumer.properties as users keep it: group and deserializer settings,
/// TLS versions, and `ssl.key.password` left in after the keystore was converted to PEM.
/// It works unchanged over mTLS; the group is ignored with one notice and never committed
/// to; `-v` lists what was not used.
#[test]
fn a_consumer_properties_file_works_as_it_is() {
    let broker = secure_broker();
    let (topic, from, to, expected) = five_minutes(broker);
    let spec = broker.client(Listener::Ssl);
    let group = support::unique_name("app-group");
    let text = format!(
        "{}group.id={group}\n\
         client.id=reports\n\
         auto.offset.reset=earliest\n\
         enable.auto.commit=false\n\
         key.deserializer=org.apache.kafka.common.serialization.StringDeserializer\n\
         value.deserializer=org.apache.kafka.common.serialization.StringDeserializer\n\
         max.poll.records=500\n\
         session.timeout.ms=45000\n\
         ssl.enabled.protocols=TLSv1.2,TLSv1.3\n\
         ssl.protocol=TLSv1.3\n\
         ssl.key.password=changeit\n",
        spec.java_properties()
    );
    let file = std::env::temp_dir().join(support::unique_name("consumer.properties"));
    std::fs::write(&file, text).unwrap();
    let file_arg = file.display().to_string();
    let mut args = window_args(&topic, &from, &to);
    args.extend(["--config", file_arg.as_str(), "-v"]);
    let run = kseek(&args, &[]);
    // The file's group.id does not stand in for --group: --commit still needs one named.
    args.push("--commit");
    let commit = kseek(&args, &[]);
    let _ = std::fs::remove_file(&file);
    assert_eq!(commit.code, Some(2), "{}", commit.stderr);
    assert!(commit.stderr.contains("--group"), "{}", commit.stderr);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout.lines().count(), expected, "{}", run.stdout);
    let notices: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("group.id"))
        .collect();
    assert_eq!(notices.len(), 2, "{}", run.stderr);
    assert!(notices[0].contains(": group.id: ignored"), "{}", run.stderr);
    assert!(
        notices[1].starts_with("kseek: properties accepted but not used by a reader: group.id")
            && notices[1].contains("max.poll.records"),
        "{}",
        run.stderr
    );
}

/// A Java client's truststore as users have it (JKS, its password line first): the one
/// error names the file and the exact command that converts it; running that command and
/// setting the properties it names makes the read work.
#[test]
fn a_jks_truststore_gets_the_command_that_converts_it_and_that_command_works() {
    let broker = secure_broker();
    let (topic, from, to, expected) = five_minutes(broker);
    let spec = broker.client(Listener::Ssl);
    let dir = std::env::temp_dir().join(support::unique_name("kseek-jks"));
    std::fs::create_dir_all(&dir).unwrap();
    let jks = dir.join("client.truststore.jks");
    let made = Command::new("keytool")
        .args([
            "-importcert",
            "-noprompt",
            "-alias",
            "ca",
            "-storetype",
            "JKS",
        ])
        .args(["-storepass", "changeit", "-keystore"])
        .arg(&jks)
        .arg("-file")
        .arg(spec.ca_file())
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let others: String = spec
        .java_properties()
        .lines()
        .filter(|l| !l.starts_with("ssl.truststore."))
        .map(|l| format!("{l}\n"))
        .collect();
    let properties = |trust: &str| {
        let file = dir.join(support::unique_name("client.properties"));
        std::fs::write(&file, format!("{trust}{others}")).unwrap();
        file.display().to_string()
    };
    let file = properties(&format!(
        "ssl.truststore.password=changeit\nssl.truststore.location={}\n",
        jks.display()
    ));
    let mut args = window_args(&topic, &from, &to);
    args.extend(["--config", file.as_str()]);
    let run = kseek(&args, &[]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    let line = run.stderr.trim_end();
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(
        line.contains(&format!("{} is a JKS truststore", jks.display())),
        "{line}"
    );
    assert!(!line.contains("changeit"), "{line}");
    // Run the command exactly as printed, then set what it says.
    let command = line.split('`').nth(1).expect("a command in backticks");
    let converted = Command::new("sh")
        .arg("-c")
        .arg(format!("printf 'changeit\\n' | {command}"))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(converted.status.success(), "{command}: {converted:?}");
    assert!(line.contains("set ssl.truststore.location=ca.pem and ssl.truststore.type=PEM"));
    let file = properties(&format!(
        "ssl.truststore.location={}\nssl.truststore.type=PEM\n",
        dir.join("ca.pem").display()
    ));
    let mut args = window_args(&topic, &from, &to);
    args.extend(["--config", file.as_str()]);
    let run = kseek(&args, &[]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout.lines().count(), expected, "{}", run.stdout);
}

#[test]
fn secrets_come_from_the_environment_and_never_show_in_errors() {
    let broker = secure_broker();
    let spec = broker.client(Listener::SaslSsl);
    let ca = format!("ssl.ca.location={}", broker.ca_file().display());
    let bootstrap = format!("bootstrap.servers={}", spec.bootstrap());
    let base = [
        "metadata",
        "-X",
        bootstrap.as_str(),
        "-X",
        "security.protocol=SASL_SSL",
        "-X",
        "sasl.mechanism=SCRAM-SHA-512",
        "-X",
        "sasl.username=alice",
        "-X",
        ca.as_str(),
    ];
    // The right password from the environment.
    let mut args = base.to_vec();
    args.extend(["-X", "sasl.password=${env:KSEEK_TEST_PASSWORD}"]);
    let run = kseek(&args, &[("KSEEK_TEST_PASSWORD", broker.password("alice"))]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);

    // A wrong one: exit 3, one line naming the mechanism, never the password.
    let run = kseek(&args, &[("KSEEK_TEST_PASSWORD", "hunter2-wrong")]);
    assert_eq!(run.code, Some(3), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("SCRAM-SHA-512"), "{}", run.stderr);
    assert!(!run.stderr.contains("hunter2"), "{}", run.stderr);

    // A variable that isn't set: exit 2, naming it.
    let run = kseek(&args, &[]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("KSEEK_TEST_PASSWORD"), "{}", run.stderr);

    // An unknown property: exit 2, naming it; a secret given inline is not echoed.
    let mut args = base.to_vec();
    args.extend(["-X", "sasl.pasword=hunter2-typo"]);
    let run = kseek(&args, &[]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("sasl.pasword"), "{}", run.stderr);
    assert!(!run.stderr.contains("hunter2"), "{}", run.stderr);

    // --help shows no secret either.
    let run = kseek(&["read", "--help"], &[("KSEEK_TEST_PASSWORD", "hunter2")]);
    assert!(!run.stdout.contains("hunter2"));
}

#[test]
fn tls_and_certificate_errors_are_one_line_with_exit_3() {
    let broker = secure_broker();
    let untrusted = broker.client(Listener::SaslSsl).trust(Trust::UntrustedCa);
    let wrong_host = broker.client(Listener::SaslSslWrongHost);
    let no_cert = broker.client(Listener::Ssl).client_cert(ClientCert::None);
    for (spec, expect) in [
        (&untrusted, "not signed by a trusted CA"),
        (&wrong_host, "is not valid for 127.0.0.1"),
        (&no_cert, "client certificate"),
    ] {
        let file = spec.write_java_properties().display().to_string();
        let run = kseek(&["metadata", "--config", &file], &[]);
        let _ = std::fs::remove_file(&file);
        assert_eq!(run.code, Some(3), "{:?}: {}", spec.listener(), run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(run.stderr.contains(expect), "{}", run.stderr);
    }
    // Hostname verification off: a warning, then it works.
    let spec = broker
        .client(Listener::SaslSslWrongHost)
        .no_hostname_verification();
    let file = spec.write_java_properties().display().to_string();
    let run = kseek(&["metadata", "--config", &file], &[]);
    let _ = std::fs::remove_file(&file);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains("hostname verification is off"),
        "{}",
        run.stderr
    );
}
