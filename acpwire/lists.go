package acpwire

import (
	"strconv"

	"github.com/acpgw/gateway/projector"
)

// objects walks the array at i whose enclosing containers number depth,
// skipping elements that are not objects. For the n-th object it calls fn
// once with a zero token (to start an entry) and then once per member with
// the decoded key and the scanned value. A value that is not an array is
// skipped. It returns the index after the value.
func (d *decoder) objects(i, depth int, fn func(n int, key []byte, t token)) (int, error) {
	if i >= len(d.data) || d.data[i] != '[' {
		return d.skip(i, depth)
	}
	n := 0
	i++
	for first := true; ; first = false {
		v, ok, err := d.elem(i, first)
		if err != nil {
			return 0, err
		}
		if !ok {
			return v, nil
		}
		if v >= len(d.data) || d.data[v] != '{' {
			if i, err = d.skip(v, depth+1); err != nil {
				return 0, err
			}
			continue
		}
		i = v + 1
		fn(n, nil, token{})
		for first := true; ; first = false {
			key, kfl, v, ok, err := d.member(i, first)
			if err != nil {
				return 0, err
			}
			if !ok {
				i = v
				break
			}
			var t token
			if t, i, err = d.next(v, depth+2); err != nil {
				return 0, err
			}
			fn(n, d.key(key, kfl), t)
		}
		n++
	}
}

// list decodes the array of objects at i into *out: an element per
// object, given its members one by one by set (see objects). *out is nil
// for a value that is not an array and empty for [].
func list[E any](d *decoder, i, depth int, out *[]E, set func(e *E, key []byte, t token)) (int, error) {
	*out = nil
	if i < len(d.data) && d.data[i] == '[' {
		*out = make([]E, 0)
	}
	return d.objects(i, depth, func(n int, key []byte, t token) {
		if t.kind == 0 {
			var zero E
			*out = append(*out, zero)
			return
		}
		set(&(*out)[n], key, t)
	})
}

// plan decodes a plan's entries.
func (d *decoder) plan(i, depth int) (int, error) {
	return list(d, i, depth, &d.f.Update.Plan, func(e *projector.PlanEntry, key []byte, t token) {
		switch string(key) {
		case "content":
			e.Content = d.stringOr(t)
		case "priority":
			e.Priority = d.wordOr(t)
		case "status":
			e.Status = d.wordOr(t)
		}
	})
}

// commands decodes available_commands_update's availableCommands.
func (d *decoder) commands(i, depth int) (int, error) {
	return list(d, i, depth, &d.f.Update.Commands, func(c *projector.Command, key []byte, t token) {
		switch string(key) {
		case "name":
			c.Name = d.stringOr(t)
		case "description":
			c.Description = d.stringOr(t)
		}
	})
}

// configOptions decodes config_option_update's configOptions.
func (d *decoder) configOptions(i, depth int) (int, error) {
	return list(d, i, depth, &d.f.Update.Config, func(c *projector.ConfigOption, key []byte, t token) {
		switch string(key) {
		case "id":
			c.ID = d.stringOr(t)
		case "name":
			c.Name = d.stringOr(t)
		case "currentValue":
			if t.kind == '"' {
				c.Value = d.str(t.raw, t.fl)
			} else {
				c.Value = string(t.raw)
			}
		}
	})
}

// location decodes a member of a tool location.
func (d *decoder) location(loc *projector.Location, key []byte, t token) {
	switch string(key) {
	case "path":
		loc.Path = d.stringOr(t)
	case "line":
		loc.Line = 0
		if t.kind == '0' {
			if n, ok := parseInt(t.raw); ok && n == int64(int(n)) {
				loc.Line = int(n)
			}
		}
	}
}

// cost decodes usage_update's cost object.
func (d *decoder) cost(i, depth int) (int, error) {
	us := &d.f.Update.Usage
	us.Cost, us.Currency, us.CostKnown = 0, "", false
	if i >= len(d.data) || d.data[i] != '{' {
		return d.skip(i, depth)
	}
	return d.members(i, depth, func(key []byte, t token) {
		switch string(key) {
		case "amount":
			us.Cost, us.CostKnown = 0, false
			if t.kind == '0' {
				if x, err := strconv.ParseFloat(string(t.raw), 64); err == nil {
					us.Cost, us.CostKnown = x, true
				}
			}
		case "currency":
			us.Currency = d.wordOr(t)
		}
	})
}

// members walks the object at i, calling fn with
// each member's key and scanned value (containers are validated and
// skipped). It returns the index after the object.
func (d *decoder) members(i, depth int, fn func(key []byte, t token)) (int, error) {
	i++
	for first := true; ; first = false {
		key, kfl, v, ok, err := d.member(i, first)
		if err != nil {
			return 0, err
		}
		if !ok {
			return v, nil
		}
		var t token
		if t, i, err = d.next(v, depth+1); err != nil {
			return 0, err
		}
		fn(d.key(key, kfl), t)
	}
}
