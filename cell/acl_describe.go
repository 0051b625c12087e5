package cell

import "strings"

// How ACL LIST, ACL GETUSER and ACL SAVE write a user's rules back as
// rules, as Redis 7.0's ACLDescribeUser does: the user's flags, its
// password hashes, then each selector's keys, channels and commands.

// describeCommands writes a selector's command bitmap as rules: +@all or
// -@all, then the categories that fit best, then single commands (Redis's
// ACLDescribeSelectorCommandRules). The categories are chosen greedily:
// each round takes the category with fewest differences among those with
// more commands in common than different.
func (s *aclSelector) describeCommands() string {
	var b strings.Builder
	additive := !s.future
	fake := newSelector(false, false)
	if additive {
		b.WriteString("-@all ")
	} else {
		b.WriteString("+@all ")
		fake.apply([]byte("+@all"))
	}
	temp := newSelector(false, false)
	copy(temp.cmds, s.cmds)
	applied := make([]bool, len(aclCategoryNames))
	for {
		best, minDiff, maxSame := -1, int(^uint(0)>>1), 0
		for j := range aclCategoryNames {
			if applied[j] {
				continue
			}
			on, off := temp.countCategory(1 << j)
			diff, same := off, on
			if !additive {
				diff, same = on, off
			}
			if same > diff && (diff < minDiff || (diff == minDiff && same > maxSame)) {
				best, minDiff, maxSame = j, diff, same
			}
		}
		if best < 0 {
			break
		}
		cat := ACLCategory(1) << best
		fake.setCategory(cat, additive)
		temp.setCategory(cat, !additive)
		if additive {
			b.WriteString("+@")
		} else {
			b.WriteString("-@")
		}
		b.WriteString(aclCategoryNames[best])
		b.WriteByte(' ')
		applied[best] = true
	}
	t := aclTable()
	var single func(cmds []*Command)
	single = func(cmds []*Command) {
		for _, c := range cmds {
			on := s.bit(c.id)
			if on != fake.bit(c.id) {
				if on {
					b.WriteByte('+')
				} else {
					b.WriteByte('-')
				}
				b.WriteString(c.Name)
				b.WriteByte(' ')
				fake.changePerm(c, on)
			}
			if subs := t.subs[c.id]; subs != nil {
				single(subs)
			}
			if !on {
				for _, a := range s.firstArgs[c.id] {
					b.WriteString("+" + c.Name + "|" + a + " ")
				}
			}
		}
	}
	single(t.order)
	return strings.TrimSuffix(b.String(), " ")
}

// countCategory counts the commands of cat the selector allows and
// denies, subcommands included.
func (s *aclSelector) countCategory(cat ACLCategory) (on, off int) {
	t := aclTable()
	count := func(c *Command) {
		if t.cats[c.id]&cat == 0 {
			return
		}
		if s.bit(c.id) {
			on++
		} else {
			off++
		}
	}
	for _, c := range t.order {
		count(c)
		for _, sub := range t.subs[c.id] {
			count(sub)
		}
	}
	return on, off
}

// keysText is the selector's key patterns as GETUSER shows them.
func (s *aclSelector) keysText() string {
	if s.allKeys {
		return "~*"
	}
	parts := make([]string, len(s.keys))
	for i, k := range s.keys {
		parts[i] = k.String()
	}
	return strings.Join(parts, " ")
}

func (k keyPattern) String() string {
	switch k.perm {
	case aclPermRead:
		return "%R~" + k.pattern
	case aclPermWrite:
		return "%W~" + k.pattern
	default:
		return "~" + k.pattern
	}
}

// channelsText is the selector's channel patterns as GETUSER shows them.
func (s *aclSelector) channelsText() string {
	if s.allChannels {
		return "&*"
	}
	parts := make([]string, len(s.channels))
	for i, c := range s.channels {
		parts[i] = "&" + c
	}
	return strings.Join(parts, " ")
}

// describe is the selector as rules (Redis's ACLDescribeSelector).
func (s *aclSelector) describe() string {
	var b strings.Builder
	if s.allKeys {
		b.WriteString("~* ")
	} else {
		for _, k := range s.keys {
			b.WriteString(k.String())
			b.WriteByte(' ')
		}
	}
	if s.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteString("&" + c + " ")
		}
	}
	b.WriteString(s.describeCommands())
	return b.String()
}

// flagNames are the user's flags in Redis's order.
func (r *aclRules) flagNames() []string {
	var out []string
	if r.enabled {
		out = append(out, "on")
	} else {
		out = append(out, "off")
	}
	if r.nopass {
		out = append(out, "nopass")
	}
	switch r.sanitize {
	case 2:
		out = append(out, "skip-sanitize-payload")
	case 1:
		out = append(out, "sanitize-payload")
	}
	return out
}

// describe is the user's rules as one line of rules (Redis's
// ACLDescribeUser), as ACL LIST and ACL SAVE write them.
func (r *aclRules) describe() string {
	var b strings.Builder
	for _, f := range r.flagNames() {
		b.WriteString(f + " ")
	}
	for _, p := range r.passwords {
		b.WriteString("#" + p + " ")
	}
	for _, s := range r.selectors {
		if s.root {
			b.WriteString(s.describe())
		} else {
			b.WriteString(" (" + s.describe() + ")")
		}
	}
	return b.String()
}
