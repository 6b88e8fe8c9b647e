package localcluster

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// makeBridge creates the pods' bridge holding the gateway address, before
// the kubelet starts: the node's IP must be an address of the host.
func (n *Node) makeBridge() error {
	if _, err := net.InterfaceByName(n.bridge); err == nil {
		return fmt.Errorf("a network interface %s exists already (another node's, or one a killed node left: `ip link del %s`)", n.bridge, n.bridge)
	}
	ones, _ := n.subnet.Mask.Size()
	for _, args := range [][]string{
		{"link", "add", n.bridge, "type", "bridge"},
		{"addr", "add", fmt.Sprintf("%s/%d", n.gateway, ones), "dev", n.bridge},
		{"link", "set", n.bridge, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	n.ownBridge = true
	return nil
}

// deleteBridge deletes the bridge makeBridge created.
func (n *Node) deleteBridge() error {
	if !n.ownBridge {
		return nil
	}
	if out, err := exec.Command("ip", "link", "del", n.bridge).CombinedOutput(); err != nil {
		return fmt.Errorf("ip link del %s: %w: %s", n.bridge, err, out)
	}
	n.ownBridge = false
	return nil
}

// kubeletSysctls are the kernel settings the kubelet sets when they differ
// (it has no setting to leave them be): the node sets them itself and
// restores them on stop.
var kubeletSysctls = map[string]string{
	"vm/overcommit_memory":      "1",
	"vm/panic_on_oom":           "0",
	"kernel/panic":              "10",
	"kernel/panic_on_oops":      "1",
	"kernel/keys/root_maxkeys":  "1000000",
	"kernel/keys/root_maxbytes": "25000000",
}

func (n *Node) setSysctls() error {
	n.sysctls = map[string]string{}
	for k, want := range kubeletSysctls {
		p := filepath.Join("/proc/sys", k)
		old, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("reading %s: %w", p, err)
		}
		if strings.TrimSpace(string(old)) == want {
			continue
		}
		if err := os.WriteFile(p, []byte(want), 0o644); err != nil {
			return fmt.Errorf("setting %s: %w", p, err)
		}
		n.sysctls[k] = strings.TrimSpace(string(old))
	}
	return nil
}

func (n *Node) restoreSysctls() error {
	var errs []error
	for k, old := range n.sysctls {
		if err := os.WriteFile(filepath.Join("/proc/sys", k), []byte(old), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restoring %s: %w", k, err))
		}
	}
	n.sysctls = nil
	return errors.Join(errs...)
}

// unmountUnder unmounts every mount under dir (the kubelet's volumes,
// containerd's overlays, shm and network namespaces), deepest first.
func unmountUnder(dir string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("listing mounts: %w", err)
	}
	defer f.Close()
	var points []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 5 {
			continue
		}
		p := unescapeMountPath(fields[4])
		if strings.HasPrefix(p, dir+"/") {
			points = append(points, p)
		}
	}
	if err := s.Err(); err != nil {
		return fmt.Errorf("listing mounts: %w", err)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(points))) // a mount before its parents
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+3 < len(p) {
			if v, err := strconv.ParseUint(p[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(p[i])
	}
	return b.String()
}
