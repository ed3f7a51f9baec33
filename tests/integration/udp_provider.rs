//! The udp provider on datagrams the test sends over loopback to a socket
//! it binds on an address of 127/8 only it uses, IPv4 and IPv6: each
//! datagram once on send and once on receive, with its size and ends.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use super::ip_provider::unique;
use super::*;

fn datagrams(receiver: SocketAddr, sender: SocketAddr) {
    const COUNT: u64 = 25;
    const SIZE: u64 = 333;
    let (to, from) = (receiver.ip().to_string(), sender.ip().to_string());
    let script = format!(
        r#"
udp:::send /args[2]->ip_daddr == "{to}" && args[2]->ip_saddr == "{from}"/ {{
	@n["send"] = count();
	@bytes["send"] = sum(args[4]->udp_length - 8);
	@ends["send", args[3]->udps_laddr == "{from}" && args[3]->udps_raddr == "{to}" &&
	    args[3]->udps_lport == args[4]->udp_sport && args[3]->udps_rport == {port} &&
	    args[3]->udps_addr != 0 && args[1]->cs_pid == {pid} && args[2]->ip_plength == args[4]->udp_length] = count();
}}
udp:::receive /args[2]->ip_daddr == "{to}" && args[2]->ip_saddr == "{from}"/ {{
	@n["receive"] = count();
	@bytes["receive"] = sum(args[4]->udp_length - 8);
	@ends["receive", args[3]->udps_laddr == "{to}" && args[3]->udps_raddr == "{from}" &&
	    args[3]->udps_lport == {port} && args[4]->udp_dport == {port}] = count();
}}
END {{ printa("n %s %@d\n", @n); printa("bytes %s %@d\n", @bytes); printa("ends %s %d %@d\n", @ends); }}
"#,
        port = receiver.port(),
        pid = std::process::id()
    );
    let mut t = Tracer::spawn(&["-qn", READY, "-n", &script]);
    t.wait_for("ready");
    let inbox = UdpSocket::bind(receiver).expect("bind the receiver");
    let receiver = inbox.local_addr().expect("address");
    let outbox = UdpSocket::bind(sender).expect("bind the sender");
    inbox.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
    let payload = vec![7_u8; SIZE as usize];
    let mut buf = [0_u8; 1024];
    for _ in 0..COUNT {
        outbox.send_to(&payload, receiver).expect("send");
        assert_eq!(inbox.recv(&mut buf).expect("receive"), SIZE as usize);
    }
    let out = t.stop();
    out.assert_no_panic();
    assert_eq!(out.code(), 0, "{}", out.stderr);
    for dir in ["send", "receive"] {
        let line = |what: &str| format!("{what} {dir} ");
        let value = |prefix: String| -> u64 {
            out.stdout
                .lines()
                .find_map(|l| l.strip_prefix(&prefix).and_then(|v| v.trim().parse().ok()))
                .unwrap_or_else(|| panic!("no {prefix:?} in:\n{}", out.stdout))
        };
        assert_eq!(value(line("n")), COUNT, "{}", out.stdout);
        assert_eq!(value(line("bytes")), COUNT * SIZE, "{}", out.stdout);
        assert_eq!(value(format!("ends {dir} 1 ")), COUNT, "{}", out.stdout);
    }
}

#[test]
fn udp_datagrams_over_ipv4_loopback_are_counted_exactly() {
    let n = unique(21) as u8;
    datagrams(SocketAddr::from(([127, 79, n, 1], 0)).with_fixed_port(), SocketAddr::from(([127, 79, n, 2], 0)));
}

#[test]
fn udp_datagrams_over_ipv6_loopback_are_counted_exactly() {
    datagrams(
        SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, 0)).with_fixed_port(),
        SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, 0)),
    );
}

trait FixedPort {
    fn with_fixed_port(self) -> SocketAddr;
}

impl FixedPort for SocketAddr {
    /// The same address with a port free now, so the script can name it.
    fn with_fixed_port(self) -> SocketAddr {
        UdpSocket::bind(self).expect("bind").local_addr().expect("address")
    }
}
