#!/usr/bin/python3
"""HTTP/2 rapid reset (CVE-2023-44487) against a real onemodeld, on loopback only.

Starts onemodeld (with a bearer token it never sends), opens a few connections that each
send HEADERS + RST_STREAM pairs as fast as the socket takes them for a few seconds (reading
and dropping what the server sends), samples the server's RSS meanwhile, prints the figures,
and exits 1 unless the peak stayed under --max-rss-mib and the server still answers a gRPC
health check (with --mutual-tls: unless every flood connection failed its handshake).
Hand-made frames, standard library and openssl only. CTest runs it with --tls and
--mutual-tls; plaintext has no bound with Debian's gRPC 1.51 (docs/security.md).

  rapid_reset.py ONEMODELD [--seconds 4] [--connections 4] [--max-rss-mib 512] [--tls | --mutual-tls]
                   [onemodeld flags]
"""
import argparse
import os
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(kind, flags, stream, payload=b""):
    """One HTTP/2 frame."""
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(
        ">I", stream) + payload


def literal(index, value):
    """HPACK literal without indexing, name from the static table."""
    value = value.encode()
    return (bytes([index]) if index < 15 else bytes([15, index - 15])) + bytes(
        [len(value)]) + value


def request_headers():
    """A gRPC Run call's request headers (no authorization)."""
    te = b"\x00\x02te\x08trailers"
    return (b"\x83\x86" + literal(4, "/onemodel.v1.OneModel/Run") +
            literal(1, "127.0.0.1") + literal(31, "application/grpc") + te)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def discard(sock):
    """Reads and drops what the server sends, so it is never blocked on a full socket."""
    try:
        while sock.recv(1 << 20):
            pass
    except OSError:
        pass


def connect(port, tls, timeout=None):
    """A TCP connection to the server; with `tls`, TLS with ALPN h2, no client certificate and
    no server verification (raises ssl.SSLError when the server requires a certificate)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    if not tls:
        return sock
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])
    return context.wrap_socket(sock)


def flood(port, tls, stop, counts, refused):
    """HEADERS + RST_STREAM(CANCEL) pairs on one connection until `stop` is set."""
    headers = request_headers()
    try:
        sock = connect(port, tls)
    except OSError as error:
        refused.append(error)  # the TLS handshake failed
        return
    reader = threading.Thread(target=discard, args=(sock,))
    reader.start()
    try:
        sock.sendall(PREFACE + frame(4, 0, 0))  # SETTINGS
        stream = 1
        while not stop.is_set():
            burst = bytearray()
            for _ in range(200):
                burst += frame(1, 0x4, stream, headers)  # HEADERS, END_HEADERS
                burst += frame(3, 0, stream, struct.pack(">I", 8))  # RST_STREAM CANCEL
                stream += 2
            sock.sendall(burst)
            counts.append(200)
            if stream > 2**31 - 1000:
                break
    except OSError as error:
        refused.append(error)  # the server closed the connection (or refused the handshake late)
    finally:
        # Reset, not close: the server drops what it has not read yet instead of working
        # through seconds of queued streams before the health check. The reader stops first
        # (SHUT_RD wakes it and sends nothing): a descriptor closed under a blocked read is
        # free for the health check's socket while OpenSSL may still read that number, and
        # the reader would take the health check's handshake.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        try:
            sock.shutdown(socket.SHUT_RD)
        except OSError:
            pass  # already reset by the server
        reader.join()
        sock.close()


def health_ok(port, tls):
    """A plain grpc.health.v1.Health/Check over a fresh connection: status 0 in trailers."""
    try:
        sock = connect(port, tls, timeout=10)
    except OSError:
        return False
    headers = (b"\x83\x86" + literal(4, "/grpc.health.v1.Health/Check") +
               literal(1, "127.0.0.1") + literal(31, "application/grpc") +
               b"\x00\x02te\x08trailers")
    message = b"\x00\x00\x00\x00\x00"  # an empty HealthCheckRequest
    sock.sendall(PREFACE + frame(4, 0, 0) + frame(1, 0x4, 1, headers) + frame(0, 0x1, 1, message))
    data = b""
    deadline = time.time() + 10
    while time.time() < deadline and b"grpc-status" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    sock.close()
    # grpc-status is sent as a literal; "0" follows its name.
    return b"grpc-status\x010" in data


def tls_flags(directory, mutual):
    """onemodeld's TLS flags, with a self-signed certificate for 127.0.0.1 made by openssl; with
    `mutual`, that certificate is also the only client CA (the flooder has no certificate)."""
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key,
                    "-out", cert], check=True, capture_output=True)
    return ["--tls-cert", cert, "--tls-key", key] + (["--tls-client-ca", cert] if mutual else [])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("onemodeld")
    parser.add_argument("--seconds", type=float, default=4)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--max-rss-mib", type=int, default=512)
    parser.add_argument("--tls", action="store_true",
                        help="serve TLS (a certificate made with openssl); flood without a "
                        "client certificate")
    parser.add_argument("--mutual-tls", action="store_true",
                        help="as --tls, and the server requires client certificates: every "
                        "flood connection must fail its handshake (no health check)")
    args, flags = parser.parse_known_args()  # the rest: more onemodeld flags

    with tempfile.TemporaryDirectory() as tmp:
        token = os.path.join(tmp, "token")
        with open(token, "w") as out:
            out.write("a-token-the-flood-never-sends\n")
        ready = os.path.join(tmp, "ready")
        args.tls |= args.mutual_tls
        if args.tls:
            flags += tls_flags(tmp, args.mutual_tls)
        server = subprocess.Popen([
            args.onemodeld, "--listen", "127.0.0.1:0", "--metrics-listen", "off",
            "--ready-file", ready, "--auth-token-file", token, "--log-level", "warn"
        ] + flags)
        try:
            for _ in range(300):
                if os.path.exists(ready):
                    break
                time.sleep(0.1)
            with open(ready) as text:
                address = dict(line.split("=", 1) for line in text.read().split())["grpc"]
            port = int(address.rsplit(":", 1)[1])
            baseline = rss_kib(server.pid)
            stop = threading.Event()
            counts = []
            refused = []
            threads = [threading.Thread(target=flood, args=(port, args.tls, stop, counts, refused))
                       for _ in range(args.connections)]
            for thread in threads:
                thread.start()
            peak = baseline
            end = time.time() + args.seconds
            while time.time() < end:
                peak = max(peak, rss_kib(server.pid))
                time.sleep(0.05)
            stop.set()
            for thread in threads:
                thread.join()
            peak = max(peak, rss_kib(server.pid))
            streams = sum(counts)
            if args.mutual_tls:
                # (with TLS 1.3 the client may write frames before the server's alert arrives:
                # they are counted as sent, but the server never reads them)
                healthy = len(refused) == args.connections
                after = f"{len(refused)} of {args.connections} connections refused"
            else:
                healthy = health_ok(port, args.tls)
                after = "health check after: " + ("SERVING" if healthy else "FAILED")
            print(f"rapid reset: {streams} streams opened and reset in {args.seconds} s on "
                  f"{args.connections} connections; RSS {baseline // 1024} MiB before, peak "
                  f"{peak // 1024} MiB (bound {args.max_rss_mib} MiB); {after}")
            ok = peak // 1024 < args.max_rss_mib and healthy and server.poll() is None
        finally:
            server.terminate()
            server.wait(timeout=60)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
