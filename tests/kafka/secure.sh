# shellcheck shell=bash
# The security mode of tests/kafka/broker (`start --security`): test-time certificates,
# SASL users, the listener settings and the ACLs. Sourced by tests/kafka/broker.
#
# Everything secret is made fresh per start under <dir>/secure/ (nothing is committed):
#   ca.pem, ca.key            the test CA the broker and clients trust
#   broker-keystore.pem       the broker's key + certificate (SAN IP:127.0.0.1, DNS:localhost,
#                             RSA 2048) + the CA; PEM keystore (ssl.keystore.type=PEM)
#   wronghost-keystore.pem    a certificate from the same CA for DNS:wrong.kseek.invalid only
#                             (the WRONGHOST listener presents it: hostname verification fails)
#   client.crt, client.key    a client certificate CN=alice from the CA (mTLS; EC P-256, PKCS#8)
#   client-keystore.pem       the same key + certificate chain in one file (ssl.keystore.type=PEM)
#   untrusted-ca.pem          a second CA nobody trusts: a client trusting only it must refuse
#                             the broker
#   untrusted-client.crt/.key/-keystore.pem
#                             a client certificate CN=mallory from the untrusted CA: the broker
#                             must refuse it on the SSL listener
#
# Listeners (besides PLAINTEXT, where ANONYMOUS is a super user so tests can write test data,
# and CONTROLLER):
#   SASL_SSL         SCRAM-SHA-512, PLAIN
#   SSL              ssl.client.auth=required; the certificate's CN is the principal
#                    (ssl.principal.mapping.rules), so client.crt authenticates as User:alice
#   SASL_PLAINTEXT   SCRAM-SHA-512, SCRAM-SHA-256, PLAIN, OAUTHBEARER (Kafka's unsecured JWS
#                    validator: a token {"alg":"none"} whose "sub" claim is the principal)
#   WRONGHOST        SASL_SSL as above, but presenting the wrong-hostname certificate
#
# Users (each with one random password for SCRAM-SHA-512, SCRAM-SHA-256 and PLAIN; SCRAM
# credentials are added at format time with kafka-storage format --add-scram):
#   admin   super user
#   alice   TOPIC * READ WRITE DESCRIBE DESCRIBE_CONFIGS; GROUP * READ DESCRIBE;
#           TRANSACTIONAL_ID * WRITE DESCRIBE: may do everything a reader or producer does
#   bob     TOPIC * DESCRIBE; GROUP * READ DESCRIBE: metadata, ListOffsets, FindCoordinator and
#           OffsetFetch work, Fetch and OffsetCommit fail with TOPIC_AUTHORIZATION_FAILED
#   carol   TOPIC * READ DESCRIBE; no group ACL: reading without a group works, every group
#           request (FindCoordinator, OffsetFetch, OffsetCommit) fails with
#           GROUP_AUTHORIZATION_FAILED
#   dave    TOPIC * READ DESCRIBE; GROUP * DESCRIBE: FindCoordinator and OffsetFetch work,
#           OffsetCommit and JoinGroup fail with GROUP_AUTHORIZATION_FAILED (no READ on the group)
# The authorizer is StandardAuthorizer with allow.everyone.if.no.acl.found=false; super users
# are User:ANONYMOUS (PLAINTEXT and CONTROLLER, the broker's own listeners) and User:admin.

SECURE_USERS=(admin alice bob carol dave)
SECURE_WRONG_HOST=wrong.kseek.invalid

# The ACLs, as KTool --acl specs PRINCIPAL,RESOURCE_TYPE,NAME,OPERATION (literal, allow).
secure_acls() {
    local op
    for op in READ WRITE DESCRIBE DESCRIBE_CONFIGS; do echo "User:alice,TOPIC,*,$op"; done
    for op in READ DESCRIBE; do echo "User:alice,GROUP,*,$op"; done
    for op in WRITE DESCRIBE; do echo "User:alice,TRANSACTIONAL_ID,*,$op"; done
    echo "User:bob,TOPIC,*,DESCRIBE"
    for op in READ DESCRIBE; do echo "User:bob,GROUP,*,$op"; done
    for op in READ DESCRIBE; do echo "User:carol,TOPIC,*,$op"; done
    for op in READ DESCRIBE; do echo "User:dave,TOPIC,*,$op"; done
    echo "User:dave,GROUP,*,DESCRIBE"
}

# A random password: 24 characters of [A-Za-z0-9] (safe in a JAAS config and a sourced file).
secure_password() {
    local p=
    while ((${#p} < 24)); do
        p+=$(head -c 32 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
    done
    echo "${p:0:24}"
}

# openssl, quiet unless it fails.
secure_openssl() {
    local out
    if ! out=$(openssl "$@" 2>&1); then
        echo "$out" >&2
        die "openssl $1 failed"
    fi
}

# A self-signed CA: secure_ca <dir> <name> <subject CN>.
secure_ca() {
    local d=$1 name=$2 cn=$3
    secure_openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/$name.key"
    secure_openssl req -x509 -new -key "$d/$name.key" -out "$d/$name.pem" -days 30 \
        -subj "/O=kseek test/CN=$cn" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign"
}

# A leaf certificate signed by a CA:
#   secure_leaf <dir> <name> <ca name> <subject> <key algorithm: rsa|ec> <extensions>
# writes <name>.crt, <name>.key (unencrypted PKCS#8) and <name>-keystore.pem (key, certificate,
# CA certificate).
secure_leaf() {
    local d=$1 name=$2 ca=$3 subject=$4 alg=$5 ext=$6
    case "$alg" in
        rsa) secure_openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$d/$name.key" ;;
        ec) secure_openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/$name.key" ;;
    esac
    secure_openssl req -new -key "$d/$name.key" -out "$d/$name.csr" -subj "$subject"
    printf '%b\n' "$ext" >"$d/$name.ext"
    secure_openssl x509 -req -in "$d/$name.csr" -CA "$d/$ca.pem" -CAkey "$d/$ca.key" \
        -set_serial "0x$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')" -days 30 \
        -extfile "$d/$name.ext" -out "$d/$name.crt"
    cat "$d/$name.key" "$d/$name.crt" "$d/$ca.pem" >"$d/$name-keystore.pem"
    rm -f "$d/$name.csr" "$d/$name.ext"
}

# Makes every certificate and key under <dir> (see the top of this file).
secure_make_certs() {
    local d=$1 server client
    mkdir -p "$d"
    chmod 700 "$d"
    server='basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth'
    client='basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth'
    secure_ca "$d" ca "kseek test CA"
    secure_ca "$d" untrusted-ca "kseek untrusted test CA"
    secure_leaf "$d" broker ca "/O=kseek test/CN=localhost" rsa \
        "$server\nsubjectAltName=IP:127.0.0.1,DNS:localhost"
    secure_leaf "$d" wronghost ca "/O=kseek test/CN=$SECURE_WRONG_HOST" ec \
        "$server\nsubjectAltName=DNS:$SECURE_WRONG_HOST"
    secure_leaf "$d" client ca "/CN=alice" ec "$client"
    secure_leaf "$d" untrusted-client untrusted-ca "/CN=mallory" ec "$client"
    # Only the keystores, keys, and certificates tests use are kept readable; no JKS anywhere.
    chmod 600 "$d"/*.key "$d"/*-keystore.pem
}

# Fills the associative array SECURE_PASSWORD (user -> password) with fresh passwords.
secure_make_passwords() {
    local u
    declare -gA SECURE_PASSWORD=()
    for u in "${SECURE_USERS[@]}"; do
        SECURE_PASSWORD[$u]=$(secure_password)
    done
}

# The --add-scram arguments of kafka-storage format: every user, SCRAM-SHA-512 and -256.
secure_scram_args() {
    local u m
    for u in "${SECURE_USERS[@]}"; do
        for m in SCRAM-SHA-512 SCRAM-SHA-256; do
            printf '%s\n' --add-scram "$m=[name=$u,password=${SECURE_PASSWORD[$u]}]"
        done
    done
}

# The JAAS config of PLAIN on a listener: every user and password.
secure_plain_jaas() {
    local u s="org.apache.kafka.common.security.plain.PlainLoginModule required"
    for u in "${SECURE_USERS[@]}"; do
        s+=" user_$u=\"${SECURE_PASSWORD[$u]}\""
    done
    echo "$s;"
}

# The broker settings of the security mode:
#   secure_listener_config <secure dir> <plaintext port> <controller port> <sasl_ssl port>
#                          <ssl port> <sasl_plaintext port> <wronghost port>
secure_listener_config() {
    local d=$1 port=$2 cport=$3 sasl_ssl=$4 ssl=$5 sasl_plain=$6 wrong=$7 plain l
    plain=$(secure_plain_jaas)
    cat <<PROPS
# Security mode (tests/kafka/secure.sh).
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport,SASL_SSL://127.0.0.1:$sasl_ssl,SSL://127.0.0.1:$ssl,SASL_PLAINTEXT://127.0.0.1:$sasl_plain,WRONGHOST://127.0.0.1:$wrong
advertised.listeners=PLAINTEXT://127.0.0.1:$port,SASL_SSL://127.0.0.1:$sasl_ssl,SSL://127.0.0.1:$ssl,SASL_PLAINTEXT://127.0.0.1:$sasl_plain,WRONGHOST://127.0.0.1:$wrong
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,WRONGHOST:SASL_SSL
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=User:ANONYMOUS;User:admin
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER
ssl.keystore.type=PEM
ssl.keystore.location=$d/broker-keystore.pem
ssl.truststore.type=PEM
ssl.truststore.location=$d/ca.pem
ssl.principal.mapping.rules=RULE:^CN=(.*)\$/\$1/,DEFAULT
listener.name.ssl.ssl.client.auth=required
listener.name.wronghost.ssl.keystore.type=PEM
listener.name.wronghost.ssl.keystore.location=$d/wronghost-keystore.pem
listener.name.sasl_plaintext.sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256,PLAIN,OAUTHBEARER
listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="admin";
PROPS
    for l in sasl_ssl wronghost; do
        echo "listener.name.$l.sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN"
    done
    for l in sasl_ssl wronghost sasl_plaintext; do
        echo "listener.name.$l.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"
        echo "listener.name.$l.plain.sasl.jaas.config=$plain"
    done
}

# The state file lines of the security mode (after BOOTSTRAP=, the PLAINTEXT listener).
secure_state_lines() {
    local d=$1 sasl_ssl=$2 ssl=$3 sasl_plain=$4 wrong=$5 u users=
    cat <<STATE
SECURITY=1
BOOTSTRAP_SASL_SSL=127.0.0.1:$sasl_ssl
BOOTSTRAP_SSL=127.0.0.1:$ssl
BOOTSTRAP_SASL_PLAINTEXT=127.0.0.1:$sasl_plain
BOOTSTRAP_SASL_SSL_WRONG_HOST=127.0.0.1:$wrong
WRONG_HOST_NAME=$SECURE_WRONG_HOST
SASL_SSL_MECHANISMS=SCRAM-SHA-512,PLAIN
SASL_PLAINTEXT_MECHANISMS=SCRAM-SHA-512,SCRAM-SHA-256,PLAIN,OAUTHBEARER
SECURE_DIR=$d
CA_FILE=$d/ca.pem
CLIENT_CERT_FILE=$d/client.crt
CLIENT_KEY_FILE=$d/client.key
CLIENT_KEYSTORE_FILE=$d/client-keystore.pem
CLIENT_CERT_PRINCIPAL=alice
UNTRUSTED_CA_FILE=$d/untrusted-ca.pem
UNTRUSTED_CLIENT_CERT_FILE=$d/untrusted-client.crt
UNTRUSTED_CLIENT_KEY_FILE=$d/untrusted-client.key
UNTRUSTED_CLIENT_KEYSTORE_FILE=$d/untrusted-client-keystore.pem
STATE
    for u in "${SECURE_USERS[@]}"; do
        users+="${users:+,}$u"
        echo "PASSWORD_$u=${SECURE_PASSWORD[$u]}"
    done
    echo "USERS=$users"
}
