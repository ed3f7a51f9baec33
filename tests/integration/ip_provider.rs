//! The ip provider: ip:::send and ip:::receive on traffic the tests make
//! themselves: ping between two network namespaces joined by a veth pair
//! (created and removed here), a TCP transfer over loopback, and the seed's
//! scripts (packet sizes by destination, ip_top.d).

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use super::util::DTRACE;
use super::*;

/// Runs a command to completion; panics with its output if it fails.
pub(super) fn sh(args: &[&str]) {
    let out = Command::new(args[0]).args(&args[1..]).output().unwrap_or_else(|e| panic!("{}: {e}", args[0]));
    assert!(
        out.status.success(),
        "{}: {}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A per-test number (1..=250) for addresses no other test run uses at once.
pub(super) fn unique(salt: u32) -> u32 {
    (std::process::id().wrapping_mul(7).wrapping_add(salt)) % 250 + 1
}

/// Two network namespaces joined by a veth pair, with IPv4 10.N.0.1/2 and
/// IPv6 fd00:N::1/2 on either end; removed when dropped, whatever happened.
pub(super) struct VethPair {
    pub(super) ns: [String; 2],
    dev: [String; 2],
    pub(super) v4: [String; 2],
    pub(super) v6: [String; 2],
}

impl VethPair {
    pub(super) fn new(salt: u32) -> VethPair {
        let n = unique(salt);
        let id = format!("{}{salt}", std::process::id());
        let pair = VethPair {
            ns: [format!("dtip{id}a"), format!("dtip{id}b")],
            dev: [format!("vip{id}a"), format!("vip{id}b")],
            v4: [format!("10.{n}.0.1"), format!("10.{n}.0.2")],
            v6: [format!("fd00:{n}::1"), format!("fd00:{n}::2")],
        };
        // Dropped on a failure below: removes what exists.
        for ns in &pair.ns {
            sh(&["ip", "netns", "add", ns]);
        }
        sh(&["ip", "link", "add", &pair.dev[0], "type", "veth", "peer", "name", &pair.dev[1]]);
        for i in 0..2 {
            let (ns, dev) = (&pair.ns[i], &pair.dev[i]);
            sh(&["ip", "link", "set", dev, "netns", ns]);
            sh(&["ip", "-n", ns, "addr", "add", &format!("{}/24", pair.v4[i]), "dev", dev]);
            // nodad: the address is usable at once.
            sh(&["ip", "-n", ns, "-6", "addr", "add", &format!("{}/64", pair.v6[i]), "dev", dev, "nodad"]);
            sh(&["ip", "-n", ns, "link", "set", dev, "up"]);
        }
        pair
    }

    /// ping from the first namespace to the second: 5 echo requests of 100
    /// data bytes (108 bytes of ICMP), 0.2 s apart.
    fn ping(&self, v6: bool) {
        let to = if v6 { &self.v6[1] } else { &self.v4[1] };
        let family = if v6 { "-6" } else { "-4" };
        sh(&[
            "ip",
            "netns",
            "exec",
            &self.ns[0],
            "ping",
            family,
            "-q",
            "-c",
            "5",
            "-s",
            "100",
            "-i",
            "0.2",
            "-W",
            "5",
            to,
        ]);
    }
}

impl Drop for VethPair {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth end in it, and with it the pair.
        for ns in &self.ns {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
        let _ = Command::new("ip").args(["link", "del", &self.dev[0]]).output();
    }
}

/// ping across the veth pair, IPv4 or IPv6: 5 requests sent, 5 replies
/// received on the pinging side's veth, with the addresses, protocol and
/// payload length of each.
fn ping_across_veth(v6: bool) {
    let pair = VethPair::new(if v6 { 6 } else { 4 });
    let (src, dst) = if v6 { (&pair.v6[0], &pair.v6[1]) } else { (&pair.v4[0], &pair.v4[1]) };
    let script = format!(
        r#"
ip:::send /args[2]->ip_saddr == "{src}" && args[2]->ip_daddr == "{dst}"/ {{
	@send[args[2]->ip_ver, args[2]->ip_saddr, args[2]->ip_daddr,
	    args[4] != NULL ? args[4]->ipv4_protostr : args[5]->ipv6_nextstr,
	    args[4] != NULL ? "v4" : "v6", args[5] != NULL ? "v6" : "v4",
	    args[3]->if_name, args[3]->if_ipstack, args[2]->ip_plength] = count();
	@sender[args[1]->cs_pid != 0, args[2]->ip_plength] = count();
}}
ip:::receive /args[2]->ip_saddr == "{dst}" && args[2]->ip_daddr == "{src}"/ {{
	@receive[args[2]->ip_ver, args[2]->ip_saddr, args[2]->ip_daddr,
	    args[4] != NULL ? args[4]->ipv4_protostr : args[5]->ipv6_nextstr,
	    args[4] != NULL ? "v4" : "v6", args[5] != NULL ? "v6" : "v4",
	    args[3]->if_name, args[3]->if_ipstack, args[2]->ip_plength] = count();
}}
END {{
	printa("send %d %s %s %s %s %s %s %u %d %@d\n", @send);
	printa("receive %d %s %s %s %s %s %s %u %d %@d\n", @receive);
	printa("sender %d %d %@d\n", @sender);
}}
"#
    );
    let mut t = Tracer::spawn(&["-qn", READY, "-n", &script]);
    t.wait_for("ready");
    pair.ping(v6);
    let out = t.stop();
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let (ver, proto, args) = if v6 { (6, "ICMPV6", "v6 v6") } else { (4, "ICMP", "v4 v4") };
    // Both directions on the first namespace's veth end.
    let ns = std::fs::metadata(format!("/run/netns/{}", pair.ns[0])).expect("the namespace");
    let ipstack = std::os::unix::fs::MetadataExt::ino(&ns);
    let has = |line: String| out.stdout.lines().any(|l| l == line);
    // Neighbour discovery (IPv6) may add packets of other sizes: only the
    // echo requests and replies are 108 bytes.
    let request = format!("send {ver} {src} {dst} {proto} {args} {} {ipstack} 108 5", pair.dev[0]);
    assert!(has(request.clone()), "no {request:?} in:\n{}{}", out.stdout, out.stderr);
    let reply = format!("receive {ver} {dst} {src} {proto} {args} {} {ipstack} 108 5", pair.dev[0]);
    assert!(has(reply.clone()), "no {reply:?} in:\n{}{}", out.stdout, out.stderr);
    // ping sends the requests from its own context (cs_pid), but the first
    // waits for the neighbour's address and leaves from the softirq that
    // learns it (cs_pid 0).
    let from_ping = out.stdout.lines().find_map(|l| l.strip_prefix("sender 1 108 "));
    let from_ping: u64 = from_ping.and_then(|n| n.trim().parse().ok()).unwrap_or(0);
    assert!((4..=5).contains(&from_ping), "{}", out.stdout);
}

#[test]
fn ip_ping_ipv4_across_a_veth_pair() {
    ping_across_veth(false);
}

#[test]
fn ip_ping_ipv6_across_a_veth_pair() {
    ping_across_veth(true);
}

/// A TCP transfer of a known size over loopback, between two addresses of
/// 127/8 that only this test uses: the sent packets' payload lengths add up
/// to the bytes written plus the TCP headers, 20 to 60 bytes a packet.
#[test]
fn ip_tcp_transfer_over_loopback_accounts_for_the_payload() {
    const BYTES: usize = 3 * 1024 * 1024 + 12345;
    let n = unique(7);
    let server_addr = Ipv4Addr::new(127, 77, n as u8, 1);
    let client_addr = Ipv4Addr::new(127, 77, n as u8, 2);
    let script = format!(
        r#"
ip:::send /args[2]->ip_saddr == "{client_addr}" && args[2]->ip_daddr == "{server_addr}" && args[4]->ipv4_protostr == "TCP"/ {{
	@packets = count();
	@plength = sum(args[2]->ip_plength);
	/* The TCP header's length: its data offset, in 32-bit words. */
	this->tcp = args[4]->ipv4_hdr + args[4]->ipv4_ihl;
	this->payload = args[2]->ip_plength - ((*(uint8_t *)(this->tcp + 12)) >> 4) * 4;
	@payload = sum(this->payload);
	/* A loaded machine may retransmit a segment even on loopback: the
	 * same sequence number again (as a key, network order is fine). */
	this->seq = *(uint32_t *)(this->tcp + 4);
	@retransmitted = sum(this->payload && sent[this->seq] ? this->payload : 0);
	sent[this->seq] = this->payload ? 1 : sent[this->seq];
	@where[args[3]->if_name, args[3]->if_local, args[1]->cs_pid == {pid} ? "mine" : "other"] = count();
}}
END {{
	printa("packets %@d\n", @packets);
	printa("plength %@d\n", @plength);
	printa("payload %@d\n", @payload);
	printa("retransmitted %@d\n", @retransmitted);
	printa("where %s %d %s %@d\n", @where);
}}
"#,
        pid = std::process::id()
    );
    let mut t = Tracer::spawn(&["-qn", READY, "-n", &script]);
    t.wait_for("ready");

    let listener = TcpListener::bind(SocketAddr::from((server_addr, 0))).expect("listen");
    let port = listener.local_addr().expect("address").port();
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().expect("accept");
        let mut received = Vec::new();
        conn.read_to_end(&mut received).expect("read");
        received.len()
    });
    let socket = connect_from(client_addr, SocketAddr::from((server_addr, port)));
    let mut client = socket;
    let chunk = vec![0x5a_u8; 64 * 1024];
    let mut left = BYTES;
    while left > 0 {
        let n = left.min(chunk.len());
        client.write_all(&chunk[..n]).expect("write");
        left -= n;
    }
    client.shutdown(std::net::Shutdown::Write).expect("shutdown");
    assert_eq!(server.join().expect("server"), BYTES);
    drop(client);
    std::thread::sleep(Duration::from_millis(300));
    let out = t.stop();
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let value = |name: &str| -> u64 {
        let line = out.stdout.lines().find_map(|l| l.strip_prefix(&format!("{name} ")));
        line.and_then(|v| v.trim().parse().ok()).unwrap_or_else(|| panic!("no {name} in:\n{}", out.stdout))
    };
    let (packets, plength, payload) = (value("packets"), value("plength"), value("payload"));
    let retransmitted = value("retransmitted");
    // Exact: the payload lengths less each packet's TCP header, less what
    // was sent again.
    assert_eq!(payload - retransmitted, BYTES as u64, "{}", out.stdout);
    // Without reading the TCP header: 20 to 60 bytes of it per packet.
    let headers = plength - payload;
    assert!(headers >= 20 * packets && headers <= 60 * packets, "{}", out.stdout);
    // Sent on lo, by this process (the data; acknowledgements of the
    // handshake may come from softirq context, pid 0).
    assert!(out.stdout.lines().any(|l| l.starts_with("where lo 1 mine ")), "{}", out.stdout);
    assert!(!out.stdout.lines().any(|l| l.starts_with("where ") && !l.starts_with("where lo 1 ")), "{}", out.stdout);
}

/// connect() from a chosen local address (std has no bind-then-connect).
pub(super) fn connect_from(local: Ipv4Addr, to: SocketAddr) -> TcpStream {
    use std::os::fd::FromRawFd;
    // SAFETY: plain socket calls on a descriptor this function owns until
    // it hands it to TcpStream.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket");
        let sockaddr = |ip: Ipv4Addr, port: u16| libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr { s_addr: u32::from(ip).to_be() },
            sin_zero: [0; 8],
        };
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let me = sockaddr(local, 0);
        assert_eq!(libc::bind(fd, &me as *const _ as *const libc::sockaddr, len), 0, "bind");
        let SocketAddr::V4(to) = to else { panic!("IPv4 only") };
        let them = sockaddr(*to.ip(), to.port());
        assert_eq!(libc::connect(fd, &them as *const _ as *const libc::sockaddr, len), 0, "connect");
        TcpStream::from_raw_fd(fd)
    }
}

/// Pings a loopback address only this test uses, `count` times.
fn ping_loopback(to: &str, count: u32, size: u32, interval: &str) -> std::process::Child {
    Command::new("ping")
        .args(["-q", "-c", &count.to_string(), "-s", &size.to_string(), "-i", interval, to])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("ping")
}

/// Seed 000/001: the distribution of IP packet sizes by destination and
/// execname.
#[test]
fn ip_seed_packet_size_quantize_by_destination_and_execname() {
    let to = format!("127.78.{}.1", unique(8));
    let path = script(
        "ip_size.d",
        "#!/usr/sbin/dtrace -s\n\n#pragma D option quiet\n\nip:::send\n{\n    @c[args[2]->ip_daddr, execname] =\n        quantize(args[2]->ip_plength);\n}\n",
    );
    let mut t = Tracer::spawn(&["-n", READY, "-s", &path]);
    t.wait_for("ready");
    let mut ping = ping_loopback(&to, 5, 100, "0.2");
    assert!(ping.wait().expect("ping").success());
    let out = t.stop();
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    let key = lines
        .iter()
        .position(|l| l.split_whitespace().collect::<Vec<_>>() == [to.as_str(), "ping"])
        .unwrap_or_else(|| panic!("no {to} ping key in:\n{}", out.stdout));
    assert_eq!(lines[key + 1], "           value  ------------- Distribution ------------- count    ");
    // 108 bytes of ICMP: all 5 in the 64 bucket, between empty ones.
    let rows: Vec<(u64, &str, u64)> = lines[key + 2..]
        .iter()
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let (value, rest) = l.split_once(" |").unwrap_or_else(|| panic!("row {l:?}"));
            let count = rest[41..].trim().parse().unwrap_or_else(|_| panic!("row {l:?}"));
            (value.trim().parse().unwrap_or_else(|_| panic!("row {l:?}")), &rest[..40], count)
        })
        .collect();
    let buckets: Vec<(u64, u64)> = rows.iter().map(|r| (r.0, r.2)).collect();
    assert_eq!(buckets, [(32, 0), (64, 5), (128, 0)], "{}", out.stdout);
    assert_eq!(rows[1].1, "@".repeat(40));
}

/// Seed 003: ip_top.d run as `./ip_top.d 2s 5` from its own shebang: every
/// 2 s a %Y line and at most 5 rows of address, direction and bytes per
/// second.
#[test]
fn ip_seed_ip_top_prints_the_top_addresses_every_interval() {
    let to = format!("127.79.{}.1", unique(9));
    let text = "#!/usr/sbin/dtrace -s\n\n#pragma D option quiet\n\ndtrace:::BEGIN {\n    ts = timestamp;\n}\n\nip:::send {\n    @[args[2]->ip_daddr, probename] =\n        sum(args[2]->ip_plength);\n}\n\nip:::receive {\n    @[args[2]->ip_saddr, probename] =\n        sum(args[2]->ip_plength);\n}\n\n/*\n * print top-n\n * normalized to bytes per second\n */\ntick-$1 {\n    trunc(@, $2);\n    normalize(@, (timestamp-ts) / 1000000000);\n    printf(\"\\n%Y\\n\", walltimestamp);\n    printa(\"%-15s %-10s %@15d\\n\", @);\n    ts = timestamp;\n    trunc(@);          /* start from scratch */\n}\n";
    let path = script("ip_top.d", &text.replace("#!/usr/sbin/dtrace -s", &format!("#!{DTRACE} -s")));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    // 50008-byte packets every 5 ms (about 10 MB/s each way) outweigh
    // whatever else the machine (or another test) sends.
    let mut ping = ping_loopback(&to, 2000, 50000, "0.005");
    std::thread::sleep(Duration::from_millis(300));
    let mut command = Command::new(&path);
    command.args(["2s", "5"]);
    let mut t = Tracer::spawn_command(command);
    std::thread::sleep(Duration::from_millis(5000));
    let out = t.stop();
    let _ = ping.kill();
    let _ = ping.wait();
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let blocks: Vec<&str> = out.stdout.trim_start_matches('\n').trim_end().split("\n\n").collect();
    assert!(blocks.len() >= 2, "{}", out.stdout);
    let mut times = Vec::new();
    for block in &blocks {
        let mut lines = block.lines();
        // "%Y": 2026 Nov 22 07:35:36
        let stamp = lines.next().unwrap_or_default();
        let words: Vec<&str> = stamp.split_whitespace().collect();
        assert!(words.len() == 4 && words[0].len() == 4 && words[3].len() == 8, "{stamp:?} in:\n{}", out.stdout);
        let hms: Vec<u32> = words[3].split(':').map(|w| w.parse().expect("h:m:s")).collect();
        times.push(hms[0] * 3600 + hms[1] * 60 + hms[2]);
        let rows: Vec<&str> = lines.collect();
        assert!(!rows.is_empty() && rows.len() <= 5, "{block}");
        for row in &rows {
            // "%-15s %-10s %@15d"
            let words: Vec<&str> = row.split_whitespace().collect();
            assert_eq!(words.len(), 3, "{row:?}");
            assert!(words[1] == "send" || words[1] == "receive", "{row:?}");
            assert!(words[2].parse::<u64>().is_ok(), "{row:?}");
        }
        // The ping's requests go to `to`; its replies come from it.
        for direction in ["send", "receive"] {
            let row = rows
                .iter()
                .find(|r| r.split_whitespace().take(2).collect::<Vec<_>>() == [to.as_str(), direction])
                .unwrap_or_else(|| panic!("no {to} {direction} row in {block}"));
            let rate: u64 = row.split_whitespace().nth(2).and_then(|v| v.parse().ok()).expect("rate");
            assert!((1_000_000..=50_000_000).contains(&rate), "{row:?}: not bytes per second");
        }
    }
    // Every 2 s (the %Y lines have whole seconds).
    for pair in times.windows(2) {
        let gap = (pair[1] + 86400 - pair[0]) % 86400;
        assert!((1..=3).contains(&gap), "{times:?}");
    }
}

/// A network namespace of the test's own, with lo up; deleted when dropped.
struct Netns(String);

impl Netns {
    fn new(salt: u32) -> Netns {
        let ns = Netns(format!("dtip{}{salt}n", std::process::id()));
        sh(&["ip", "netns", "add", &ns.0]);
        sh(&["ip", "-n", &ns.0, "link", "set", "lo", "up"]);
        ns
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).output();
    }
}

/// IPv6 addresses read as RFC 5952 writes them (the entry program formats
/// them), and if_ipstack names the namespace the packets are in.
#[test]
fn ip_ipv6_addresses_are_text_as_rfc_5952_writes_them() {
    let ns = Netns::new(10);
    // (as configured, as RFC 5952 writes it)
    let cases = [
        ("2001:0db8:0000:0000:0001:0000:0000:0001", "2001:db8::1:0:0:1"), // the first of equal runs
        ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),                 // one zero group stays
        ("2001:0:0:1:0:0:0:1", "2001:0:0:1::1"),                          // the longest run
        ("2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff", "2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff"),
        ("1:0:0:0:0:0:0:0", "1::"),
        ("0:0:0:0:0:0:0:1", "::1"),
    ];
    for (address, _) in &cases[..5] {
        sh(&["ip", "-n", &ns.0, "-6", "addr", "add", &format!("{address}/128"), "dev", "lo"]);
    }
    let inode = std::fs::metadata(format!("/run/netns/{}", ns.0)).map(|m| std::os::unix::fs::MetadataExt::ino(&m));
    let inode = inode.expect("the namespace's inode");
    let script = format!(
        r#"ip:::send /args[2]->ip_ver == 6 && args[3]->if_ipstack == {inode}/ {{
	@[args[2]->ip_daddr, args[5]->ipv6_daddr, args[2]->ip_saddr == args[5]->ipv6_saddr] = count();
}}
END {{ printa("%s %s %d %@d\n", @); }}"#
    );
    let mut t = Tracer::spawn(&["-qn", READY, "-n", &script]);
    t.wait_for("ready");
    for (address, _) in &cases {
        sh(&["ip", "netns", "exec", &ns.0, "ping", "-6", "-q", "-c", "1", "-W", "5", address]);
    }
    let out = t.stop();
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    for (_, text) in &cases {
        // The echo request and its reply, both to the address itself.
        let line = format!("{text} {text} 1 ");
        assert!(out.stdout.lines().any(|l| l.starts_with(&line)), "no {line:?} in:\n{}", out.stdout);
    }
}
