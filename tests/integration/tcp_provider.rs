//! The tcp provider on connections the tests make themselves: over
//! loopback between two addresses of 127/8 only the test uses, and between
//! two network namespaces joined by a veth pair. Each connection gives
//! exactly one connect-request, connect-established and accept-established,
//! its state changes in Solaris' order, and send/receive payloads
//! (`ip_plength - tcp_offset`) that add up to what the test wrote; a
//! connection to a port nothing listens on fires connect-refused and
//! accept-refused once each.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

use super::ip_provider::{connect_from, unique, VethPair};
use super::*;

/// The script: every event between `client` and `server` (text addresses).
fn script(client: &str, server: &str) -> String {
    format!(
        r#"
tcp:::connect-request /args[2]->ip_saddr == "{client}" && args[2]->ip_daddr == "{server}"/ {{
	@events["connect-request", args[4]->tcp_flags == TH_SYN, args[3]->tcps_state == TCP_STATE_SYN_SENT] = count();
}}
tcp:::connect-established /args[3]->tcps_laddr == "{client}" && args[3]->tcps_raddr == "{server}"/ {{
	@events["connect-established", args[4]->tcp_flags == (TH_SYN | TH_ACK), args[3]->tcps_active] = count();
}}
tcp:::accept-established /args[3]->tcps_laddr == "{server}" && args[3]->tcps_raddr == "{client}"/ {{
	@events["accept-established", args[4]->tcp_flags == TH_ACK, !args[3]->tcps_active] = count();
}}
tcp:::connect-refused /args[3]->tcps_raddr == "{server}"/ {{
	@events["connect-refused", args[4]->tcp_flags == (TH_RST | TH_ACK), args[2]->ip_saddr == "{server}"] = count();
}}
tcp:::accept-refused /args[2]->ip_saddr == "{server}" && args[2]->ip_daddr == "{client}"/ {{
	@events["accept-refused", args[4]->tcp_flags == (TH_RST | TH_ACK), args[3]->tcps_state == TCP_STATE_CLOSED] = count();
}}
tcp:::state-change /args[3]->tcps_laddr == "{server}" || args[3]->tcps_raddr == "{server}"/ {{
	printf("state %s %d %s %s\n", args[3]->tcps_laddr == "{server}" ? "server" : "client", args[3]->tcps_lport,
	    tcp_state_string[args[5]->tcps_state], tcp_state_string[args[3]->tcps_state]);
}}
tcp:::send /args[2]->ip_saddr == "{client}" && args[2]->ip_daddr == "{server}"/ {{
	this->payload = args[2]->ip_plength - args[4]->tcp_offset;
	@bytes["sent"] = sum(this->payload);
	@bytes["sent again"] = sum(args[3]->tcps_retransmit ? this->payload : 0);
	@where["send", args[3]->tcps_lport == args[4]->tcp_sport, args[3]->tcps_raddr == "{server}"] = count();
}}
tcp:::receive /args[2]->ip_saddr == "{client}" && args[2]->ip_daddr == "{server}"/ {{
	this->payload = args[2]->ip_plength - args[4]->tcp_offset;
	@bytes["received"] = sum(this->payload);
	/* A segment received twice (a retransmission) has been seen. */
	@bytes["received again"] = sum(this->payload && seen[args[4]->tcp_seq] ? this->payload : 0);
	seen[args[4]->tcp_seq] = this->payload ? 1 : seen[args[4]->tcp_seq];
	@where["receive", args[3]->tcps_lport == args[4]->tcp_dport, args[3]->tcps_raddr == "{client}"] = count();
}}
END {{
	printa("event %s %d %d %@d\n", @events);
	printa("bytes %s %@d\n", @bytes);
	printa("where %s %d %d %@d\n", @where);
}}
"#
    )
}

/// What the tracer printed, parsed.
struct Seen {
    stdout: String,
}

impl Seen {
    fn value(&self, prefix: &str) -> u64 {
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix(prefix).and_then(|v| v.trim().parse().ok()))
            .unwrap_or_else(|| panic!("no {prefix:?} in:\n{}", self.stdout))
    }

    fn states(&self, who: &str, port: u16) -> Vec<String> {
        let prefix = format!("state {who} {port} ");
        self.stdout.lines().filter_map(|l| l.strip_prefix(&prefix)).map(str::to_string).collect()
    }

    /// Each connection event once, with the segment and state it must have.
    fn assert_one_connection(&self) {
        for event in ["connect-request", "connect-established", "accept-established"] {
            assert_eq!(self.value(&format!("event {event} 1 1 ")), 1, "{event}:\n{}", self.stdout);
            assert!(
                !self.stdout.lines().any(|l| l.starts_with(&format!("event {event} ")) && !l.contains(" 1 1 ")),
                "{}",
                self.stdout
            );
        }
    }

    /// Payload received, less what arrived twice, is `bytes`; so is the
    /// payload sent, less what was sent again, unless a first transmission
    /// failed before the device (a loaded machine): then its resend is one
    /// of the bytes and is counted as sent again too. A resend that starts
    /// at another sequence number than the segment it repeats (a loaded
    /// machine's partial retransmission) is not recognized as arriving
    /// twice: it is at most what was sent again.
    fn assert_bytes(&self, bytes: usize) {
        let (sent, again) = (self.value("bytes sent "), self.value("bytes sent again "));
        let received = self.value("bytes received ") - self.value("bytes received again ");
        assert!(sent >= bytes as u64 && sent - again <= bytes as u64, "{}", self.stdout);
        assert!(received >= bytes as u64 && received <= bytes as u64 + again, "{bytes}:\n{}", self.stdout);
        // Every segment's tcpsinfo_t is its own end's.
        assert!(!self.stdout.lines().any(|l| l.starts_with("where ") && !l.contains(" 1 1 ")), "{}", self.stdout);
    }
}

/// Accepts one connection, reads it to the end and closes it: the bytes read.
fn serve_one(listener: TcpListener) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().expect("accept");
        let mut received = Vec::new();
        conn.read_to_end(&mut received).expect("read");
        received.len()
    })
}

/// A server on `server` that reads everything and closes, and a client
/// from `client` that writes `bytes` and shuts down: the client's and the
/// server connection's local ports.
fn transfer(client: Ipv4Addr, server: Ipv4Addr, bytes: usize) -> (u16, u16) {
    let listener = TcpListener::bind(SocketAddr::from((server, 0))).expect("listen");
    let port = listener.local_addr().expect("address").port();
    let reader = serve_one(listener);
    let mut stream = connect_from(client, SocketAddr::from((server, port)));
    let client_port = stream.local_addr().expect("address").port();
    let chunk = vec![0x5a_u8; 64 * 1024];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len());
        stream.write_all(&chunk[..n]).expect("write");
        left -= n;
    }
    stream.shutdown(std::net::Shutdown::Write).expect("shutdown");
    assert_eq!(reader.join().expect("server"), bytes);
    // The server closed after reading: wait for its FIN before closing.
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).expect("read the server's close");
    drop(stream);
    (client_port, port)
}

#[test]
fn tcp_loopback_connection_fires_each_event_once_with_its_bytes_and_states() {
    const BYTES: usize = 2 * 1024 * 1024 + 4321;
    let n = unique(11) as u8;
    let (server, client) = (Ipv4Addr::new(127, 78, n, 1), Ipv4Addr::new(127, 78, n, 2));
    let mut t = Tracer::spawn(&["-qn", READY, "-n", &script(&client.to_string(), &server.to_string())]);
    t.wait_for("ready");
    let (client_port, server_port) = transfer(client, server, BYTES);
    std::thread::sleep(Duration::from_millis(300));
    let out = t.stop();
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let seen = Seen { stdout: out.stdout };
    seen.assert_one_connection();
    seen.assert_bytes(BYTES);
    let client_states = seen.states("client", client_port);
    // The listener closes when the test drops it, before or after the
    // accepted connection's last state change.
    let mut server_states = seen.states("server", server_port);
    let listener_closed = server_states.iter().filter(|s| *s == "state-listen state-closed").count();
    assert_eq!(listener_closed, 1, "{}", seen.stdout);
    server_states.retain(|s| s != "state-listen state-closed");
    let expect = |pairs: &[&str]| -> Vec<String> { pairs.iter().map(|s| s.to_string()).collect() };
    // The listener opens, then the accepted connection (a clone of it).
    assert_eq!(
        server_states,
        expect(&[
            "state-closed state-listen",
            "state-listen state-syn-received",
            "state-syn-received state-established",
            "state-established state-close-wait",
            "state-close-wait state-last-ack",
            "state-last-ack state-closed",
        ]),
        "{}",
        seen.stdout
    );
    // The client closes first: fin-wait-2, or closing when the server's
    // FIN crosses its own, then time-wait.
    assert_eq!(
        client_states[..3],
        expect(&[
            "state-closed state-syn-sent",
            "state-syn-sent state-established",
            "state-established state-fin-wait-1"
        ]),
        "{}",
        seen.stdout
    );
    let second = &client_states[3..];
    assert!(
        second == expect(&["state-fin-wait-1 state-fin-wait-2", "state-fin-wait-2 state-time-wait"])
            || second == expect(&["state-fin-wait-1 state-closing", "state-closing state-time-wait"]),
        "{}",
        seen.stdout
    );
}

#[test]
fn tcp_connection_refused_fires_connect_refused_and_accept_refused_once() {
    let n = unique(12) as u8;
    let (server, client) = (Ipv4Addr::new(127, 78, n, 3), Ipv4Addr::new(127, 78, n, 4));
    // A port nothing listens on (the address is this test's alone).
    let closed = {
        let probe = TcpListener::bind(SocketAddr::from((server, 0))).expect("bind");
        probe.local_addr().expect("address").port()
    };
    let mut t = Tracer::spawn(&["-qn", READY, "-n", &script(&client.to_string(), &server.to_string())]);
    t.wait_for("ready");
    let refused = std::panic::catch_unwind(|| connect_from(client, SocketAddr::from((server, closed))));
    assert!(refused.is_err(), "port {closed} accepted a connection");
    std::thread::sleep(Duration::from_millis(300));
    let out = t.stop();
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let seen = Seen { stdout: out.stdout };
    assert_eq!(seen.value("event connect-request 1 1 "), 1, "{}", seen.stdout);
    assert_eq!(seen.value("event connect-refused 1 1 "), 1, "{}", seen.stdout);
    assert_eq!(seen.value("event accept-refused 1 1 "), 1, "{}", seen.stdout);
    assert!(!seen.stdout.contains("event connect-established"), "{}", seen.stdout);
}

/// Runs `f` in network namespace `ns` on a thread of its own.
fn in_namespace<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> std::thread::JoinHandle<T> {
    let netns = std::fs::File::open(format!("/run/netns/{ns}")).expect("namespace");
    std::thread::spawn(move || {
        // SAFETY: setns(2) on a descriptor we hold; it moves only this thread.
        assert_eq!(unsafe { libc::setns(netns.as_raw_fd(), libc::CLONE_NEWNET) }, 0, "setns");
        f()
    })
}

#[test]
fn tcp_connection_across_a_veth_pair_fires_each_event_once_with_its_bytes() {
    const BYTES: usize = 1024 * 1024 + 777;
    let pair = VethPair::new(13);
    let server: Ipv4Addr = pair.v4[1].parse().expect("address");
    let mut t = Tracer::spawn(&["-qn", READY, "-n", &script(&pair.v4[0], &pair.v4[1])]);
    t.wait_for("ready");
    let listener = in_namespace(&pair.ns[1], move || TcpListener::bind(SocketAddr::from((server, 0))).expect("listen"))
        .join()
        .expect("listener");
    let port = listener.local_addr().expect("address").port();
    let reader = serve_one(listener);
    let writer = in_namespace(&pair.ns[0], move || {
        let mut stream =
            TcpStream::connect_timeout(&SocketAddr::from((server, port)), Duration::from_secs(5)).expect("connect");
        stream.write_all(&vec![0x33_u8; BYTES]).expect("write");
        stream.shutdown(std::net::Shutdown::Write).expect("shutdown");
        let mut rest = Vec::new();
        stream.read_to_end(&mut rest).expect("read the server's close");
    });
    assert_eq!(reader.join().expect("server"), BYTES);
    writer.join().expect("client");
    std::thread::sleep(Duration::from_millis(300));
    let out = t.stop();
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let seen = Seen { stdout: out.stdout };
    seen.assert_one_connection();
    seen.assert_bytes(BYTES);
}
