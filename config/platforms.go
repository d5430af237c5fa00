package config

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/acpgw/gateway/channels"
)

// Section is a chat platform's configuration section (channels.NAME): the
// adapter package's typed struct, with koanf, validate and secret tags and
// a doc comment per field, and these methods. This package composes the
// sections without knowing any platform; cmd/gateway names them
// (LoadOptions.Platforms).
type Section interface {
	// Info says what the platform's overrides and access rules call its
	// places and groups, and how its secrets look.
	Info() channels.SectionInfo
	// On reports whether the platform runs with these settings;
	// othersOn, given to a Fallback platform, says whether another
	// platform is on.
	On(othersOn bool) bool
	// Validate returns every problem of the section at path
	// (channels.NAME), each a *channels.ConfigError naming its key; on
	// says whether the platform runs. It does no I/O.
	Validate(path string, on bool) []error
}

// Optional methods of a Section.
type (
	// normalizer is a section (pointer) that tidies its values after
	// loading (a missing trailing slash).
	normalizer interface{ Normalize() }
	// idChecker checks the ids an access rule of the platform names
	// (access.NAME.users and approvers, at key) when the platform runs.
	idChecker interface {
		CheckIDs(path, key string, ids []string) []error
	}
	// tagShower shows stream tags that the base settings hide (it has
	// room for them); source names this layer in Explain.
	tagShower interface {
		ShownTags() (source string, tags []string)
	}
)

// Platform is a chat platform the configuration knows.
type Platform struct {
	// Name is the platform's key under channels, access and overrides,
	// and Scope.Platform.
	Name string
	// Defaults is its section with the default values.
	Defaults Section
}

// Channels is the channels section: one subsection per platform, each of
// its adapter package's type (see Section), and catchUp.
type Channels struct {
	// CatchUp: at start, the threads active within this long on the
	// platforms that keep a history are read from the last message seen,
	// and what people wrote while the gateway was down is answered in
	// order (0 turns it off; at most 30 days).
	CatchUp time.Duration `koanf:"catchUp" validate:"min=0,max=720h"`

	sections []section // in the order of LoadOptions.Platforms
}

// section is one platform's section.
type section struct {
	name string
	s    Section
}

// Section returns the section of the platform called name.
func (c Channels) Section(name string) (Section, bool) {
	for _, s := range c.sections {
		if s.name == name {
			return s.s, true
		}
	}
	return nil, false
}

// SectionOf returns the section of the platform called name as its
// adapter's type T; the zero T when there is none or it is not a T.
func SectionOf[T Section](c Config, name string) T {
	s, _ := c.Channels.Section(name)
	t, _ := s.(T)
	return t
}

// names lists the platforms in their order.
func (c Channels) names() []string {
	out := make([]string, len(c.sections))
	for i, s := range c.sections {
		out[i] = s.name
	}
	return out
}

// view is the section as a struct: the platforms' sections, in order,
// then catchUp.
func (c Channels) view() reflect.Value {
	var fields []reflect.StructField
	for i, s := range c.sections {
		fields = append(fields, reflect.StructField{
			Name: fmt.Sprintf("P%d", i),
			Type: reflect.TypeOf(s.s),
			Tag:  reflect.StructTag(fmt.Sprintf(`koanf:%q`, s.name)),
		})
	}
	catchUp, _ := reflect.TypeFor[Channels]().FieldByName("CatchUp")
	fields = append(fields, catchUp)
	v := reflect.New(reflect.StructOf(fields)).Elem()
	for i, s := range c.sections {
		v.Field(i).Set(reflect.ValueOf(s.s))
	}
	v.Field(len(c.sections)).Set(reflect.ValueOf(c.CatchUp))
	return v
}

// set stores a view back, tidying each section.
func (c *Channels) set(v reflect.Value) {
	for i := range c.sections {
		p := reflect.New(v.Field(i).Type())
		p.Elem().Set(v.Field(i))
		if n, ok := p.Interface().(normalizer); ok {
			n.Normalize()
		}
		c.sections[i].s = p.Elem().Interface().(Section)
	}
	c.CatchUp = v.Field(len(c.sections)).Interface().(time.Duration)
}

// Overrides is the overrides section: acp.stream, typing, busy,
// permissions and agent per platform, per space of the platform (a server,
// as the platform calls it) and per channel. The most specific wins: the
// base settings < the platform's settings < the space < the channel.
type Overrides struct {
	platforms []platformOverrides // sorted by name
}

// PlatformOverrides are one platform's overrides.
type PlatformOverrides struct {
	// Settings apply to every thread of the platform.
	Settings Body
	// Spaces apply per space id (overrides.NAME.<the platform's word
	// for its spaces>), over Settings.
	Spaces map[string]Body
	// Channels apply per channel id (a thread's parent channel), over
	// the space's.
	Channels map[string]Body
}

type platformOverrides struct {
	name string
	info channels.SectionInfo
	o    PlatformOverrides
}

func newOverrides(sections []section) Overrides {
	var o Overrides
	for _, s := range sections {
		o.platforms = append(o.platforms, platformOverrides{name: s.name, info: s.s.Info()})
	}
	slices.SortFunc(o.platforms, func(a, b platformOverrides) int { return cmp.Compare(a.name, b.name) })
	return o
}

// Platform returns the overrides of the platform called name.
func (o Overrides) Platform(name string) (PlatformOverrides, bool) {
	p, ok := o.find(name)
	return p.o, ok
}

func (o Overrides) find(name string) (platformOverrides, bool) {
	for _, p := range o.platforms {
		if p.name == name {
			return p, true
		}
	}
	return platformOverrides{}, false
}

var (
	bodyMapType = reflect.TypeFor[map[string]Body]()
	settingsTag = `koanf:"settings"`
	channelsTag = `koanf:"channels"`
)

// view is the section as a struct: per platform, in name order,
// settings, the spaces (under the platform's word) and channels, as far
// as the platform has them.
func (o Overrides) view() reflect.Value {
	var fields []reflect.StructField
	var values []reflect.Value
	for i, p := range o.platforms {
		fs := []reflect.StructField{{Name: "Settings", Type: bodyType, Tag: reflect.StructTag(settingsTag)}}
		vs := []reflect.Value{reflect.ValueOf(p.o.Settings)}
		if p.info.Spaces != "" {
			fs = append(fs, reflect.StructField{Name: "Spaces", Type: bodyMapType, Tag: reflect.StructTag(fmt.Sprintf(`koanf:%q`, p.info.Spaces))})
			vs = append(vs, reflect.ValueOf(p.o.Spaces))
		}
		if p.info.ChannelOverrides {
			fs = append(fs, reflect.StructField{Name: "Channels", Type: bodyMapType, Tag: reflect.StructTag(channelsTag)})
			vs = append(vs, reflect.ValueOf(p.o.Channels))
		}
		pv := reflect.New(reflect.StructOf(fs)).Elem()
		for j, v := range vs {
			pv.Field(j).Set(v)
		}
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("P%d", i), Type: pv.Type(), Tag: reflect.StructTag(fmt.Sprintf(`koanf:%q`, p.name))})
		values = append(values, pv)
	}
	v := reflect.New(reflect.StructOf(fields)).Elem()
	for i, pv := range values {
		v.Field(i).Set(pv)
	}
	return v
}

// set stores a view back.
func (o *Overrides) set(v reflect.Value) {
	for i := range o.platforms {
		pv := v.Field(i)
		p := &o.platforms[i].o
		p.Settings = pv.FieldByName("Settings").Interface().(Body)
		if f := pv.FieldByName("Spaces"); f.IsValid() {
			p.Spaces = f.Interface().(map[string]Body)
		}
		if f := pv.FieldByName("Channels"); f.IsValid() {
			p.Channels = f.Interface().(map[string]Body)
		}
	}
}

// composite is a section whose shape comes from the platforms: the key,
// decoding, rendering and secret walks see it as its view.
type composite interface{ view() reflect.Value }

var (
	_ composite = Channels{}
	_ composite = Overrides{}
)

// asView returns the view of v when v is a composite.
func asView(v reflect.Value) (reflect.Value, bool) {
	if v.Kind() != reflect.Struct || !v.CanInterface() {
		return v, false
	}
	if c, ok := v.Interface().(composite); ok {
		return c.view(), true
	}
	return v, false
}

// enableHints lists what turns on the platforms that need setup, for the
// error when none is on.
func (c Channels) enableHints() string {
	var hints []string
	for _, s := range c.sections {
		if i := s.s.Info(); !i.Fallback {
			hints = append(hints, i.Enable)
		}
	}
	return strings.Join(hints, " or ")
}
