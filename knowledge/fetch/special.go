package fetch

import (
	"fmt"
	"net/netip"
)

// special is every range of the IANA IPv4 and IPv6 Special-Purpose Address Registries
// (iana-ipv4-special-registry, iana-ipv6-special-registry, as of 2026), plus multicast, the
// deprecated site-local and IPv4-compatible IPv6 forms, and all of IPv6 outside global unicast
// (2000::/3). A page is fetched only from an address in none of them. Ranges the registries
// mark "globally reachable" (AS112, AMT, anycast services) are refused as well: no page lives
// there.
var special = []struct {
	prefix netip.Prefix
	name   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), `"this network" (RFC 791)`},
	{netip.MustParsePrefix("10.0.0.0/8"), "private use (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space, carrier-grade NAT (RFC 6598)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback (RFC 1122)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link local, where cloud metadata services live (RFC 3927)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private use (RFC 1918)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments (RFC 6890)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation, TEST-NET-1 (RFC 5737)"},
	{netip.MustParsePrefix("192.31.196.0/24"), "AS112 (RFC 7535)"},
	{netip.MustParsePrefix("192.52.193.0/24"), "AMT (RFC 7450)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "deprecated 6to4 relay anycast (RFC 7526)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private use (RFC 1918)"},
	{netip.MustParsePrefix("192.175.48.0/24"), "AS112 direct delegation (RFC 7534)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (RFC 2544)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation, TEST-NET-2 (RFC 5737)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation, TEST-NET-3 (RFC 5737)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast (RFC 5771)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved, and the limited broadcast address (RFC 1112, RFC 919)"},

	{netip.MustParsePrefix("::/128"), "unspecified (RFC 4291)"},
	{netip.MustParsePrefix("::1/128"), "loopback (RFC 4291)"},
	{netip.MustParsePrefix("::/96"), "deprecated IPv4-compatible IPv6 (RFC 4291)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use IPv4/IPv6 translation (RFC 8215)"},
	{netip.MustParsePrefix("100::/64"), "discard-only (RFC 6666)"},
	{netip.MustParsePrefix("100:0:0:1::/64"), "dummy IPv6 prefix (RFC 9780)"},
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignments: Teredo, benchmarking, ORCHID, AMT, AS112… (RFC 2928)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation (RFC 3849)"},
	{netip.MustParsePrefix("2002::/16"), "6to4 (RFC 3056)"},
	{netip.MustParsePrefix("2620:4f:8000::/48"), "AS112 direct delegation (RFC 7534)"},
	{netip.MustParsePrefix("3fff::/20"), "documentation (RFC 9637)"},
	{netip.MustParsePrefix("5f00::/16"), "segment routing SIDs (RFC 9602)"},
	{netip.MustParsePrefix("fc00::/7"), "unique local (RFC 4193)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local unicast (RFC 4291)"},
	{netip.MustParsePrefix("fec0::/10"), "deprecated site-local (RFC 3879)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast (RFC 4291)"},
}

// nat64 is the well-known IPv4/IPv6 translation prefix (RFC 6052): 64:ff9b::a.b.c.d reaches the
// IPv4 address a.b.c.d through a NAT64 gateway, so it is judged by that address.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

var globalUnicast = netip.MustParsePrefix("2000::/3")

// CheckAddr returns nil when ip is an ordinary public address a page may be fetched from, and
// otherwise an error wrapping ErrPrivate that names the special-purpose range it is in.
// IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses are judged by the IPv4
// address they carry.
func CheckAddr(ip netip.Addr) error {
	orig := ip
	ip = ip.WithZone("").Unmap()
	if ip.Is6() && nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte(b[12:]))
	}
	for _, s := range special {
		if s.prefix.Contains(ip) {
			return fmt.Errorf("%w: %s is in %s, %s", ErrPrivate, orig, s.prefix, s.name)
		}
	}
	if ip.Is6() && !globalUnicast.Contains(ip) {
		return fmt.Errorf("%w: %s is outside IPv6 global unicast (2000::/3)", ErrPrivate, orig)
	}
	if !ip.IsValid() {
		return fmt.Errorf("%w: %s is not an IP address", ErrPrivate, orig)
	}
	return nil
}
