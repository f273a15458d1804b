"""The tablet's address on the local network, found without the internet."""

from __future__ import annotations

import ipaddress
import socket

# Connecting a UDP socket sends nothing; it only asks the kernel which local address would route there.
_PROBES = ("10.254.254.254", "192.168.254.254", "172.31.254.254")


def is_lan(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return ip.version == 4 and ip.is_private and not ip.is_loopback and not ip.is_link_local


def lan_address(fallback: str = "127.0.0.1") -> str:
    """The first private IPv4 address of this machine that routes to a private network (Wi-Fi at the table),
    else ``fallback`` (loopback: phones then cannot join, but nothing is exposed beyond the LAN)."""
    for probe in _PROBES:
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.connect((probe, 9))
                addr = s.getsockname()[0]
        except OSError:
            continue
        if is_lan(addr):
            return addr
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            addr = str(info[4][0])
            if is_lan(addr):
                return addr
    except OSError:
        pass
    return fallback
