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

// plan decodes a plan's entries.
func (d *decoder) plan(i, depth int) (int, error) {
	u := &d.f.Update
	u.Plan = nil
	if i < len(d.data) && d.data[i] == '[' {
		u.Plan = make([]projector.PlanEntry, 0)
	}
	return d.objects(i, depth, func(n int, key []byte, t token) {
		if t.kind == 0 {
			u.Plan = append(u.Plan, projector.PlanEntry{})
			return
		}
		e := &u.Plan[n]
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
	u := &d.f.Update
	u.Commands = nil
	if i < len(d.data) && d.data[i] == '[' {
		u.Commands = make([]projector.Command, 0)
	}
	return d.objects(i, depth, func(n int, key []byte, t token) {
		if t.kind == 0 {
			u.Commands = append(u.Commands, projector.Command{})
			return
		}
		c := &u.Commands[n]
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
	u := &d.f.Update
	u.Config = nil
	if i < len(d.data) && d.data[i] == '[' {
		u.Config = make([]projector.ConfigOption, 0)
	}
	return d.objects(i, depth, func(n int, key []byte, t token) {
		if t.kind == 0 {
			u.Config = append(u.Config, projector.ConfigOption{})
			return
		}
		c := &u.Config[n]
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
