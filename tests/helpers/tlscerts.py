"""Test certificates made with the openssl CLI, for the TLS tests.

    import tlscerts                          # with tests/helpers on sys.path
    tlscerts.make(d)                         # once; then files in d:
    ca.crt/key, server.crt/key, server2.crt/key (for reloads),
    client.crt/key, expired.crt/key (a client certificate whose validity
    ended yesterday), other.crt/key (a client certificate of ca2).

The server certificates name localhost and 127.0.0.1; every certificate
is valid for 30 days from now.
"""
import os
import subprocess


def make(d):
    if os.path.exists(os.path.join(d, "done")):
        return
    os.makedirs(d, exist_ok=True)

    def ossl(*a):
        subprocess.run(["openssl"] + list(a), cwd=d, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    for ca, cn in (("ca", "Goblin Test CA"), ("ca2", "Other CA")):
        ossl("req", "-x509", "-new", "-nodes", "-newkey", "rsa:2048", "-keyout", ca + ".key", "-out", ca + ".crt",
             "-days", "30", "-subj", "/CN=" + cn)
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for name, cn, ca, days, ext in (("server", "goblin-server-1", "ca", "30", True),
                                    ("server2", "goblin-server-2", "ca", "30", True),
                                    ("client", "client", "ca", "30", False),
                                    ("expired", "expired", "ca", "-1", False),
                                    ("other", "other", "ca2", "30", False)):
        ossl("req", "-new", "-nodes", "-newkey", "rsa:2048", "-keyout", name + ".key", "-out", name + ".csr",
             "-subj", "/CN=" + cn)
        ossl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key", "-CAcreateserial",
             "-out", name + ".crt", "-days", days, *(["-extfile", "san.ext"] if ext else []))
    open(os.path.join(d, "done"), "w").close()
