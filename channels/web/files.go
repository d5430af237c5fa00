package web

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
)

// maxUploadBytes is the largest file the web chat keeps for a thread: the
// agent's files are read into memory on their way, and a local chat has
// no use for larger ones.
const maxUploadBytes = 64 << 20

// maxThreadFileBytes bounds the bytes of the files the web chat keeps for
// one thread: an agent sending file after file filled the disk (441 MB in
// one thread).
const maxThreadFileBytes = 512 << 20

// maxFileName bounds a kept file's name, in bytes.
const maxFileName = 120

// filesPrefix is the path under which the files are served.
const filesPrefix = "/api/files/"

// files keeps the files the gateway puts into threads: one file per
// upload in Options.FilesDir, named <id>-<name>, or in memory without a
// directory. Ids are random, so a link cannot be guessed.
type files struct {
	dir string
	// shared, if set, keeps the files instead, where every gateway of a
	// shared chat reads them (Options.Shared).
	shared SharedFiles

	mu  sync.Mutex        // guards mem
	mem map[string][]byte // by stored name, without a directory
}

// put keeps data under a new id and returns the id and the stored name.
// It blocks on disk I/O.
func (k *files) put(name string, data []byte) (id, stored string, err error) {
	var b [12]byte
	rand.Read(b[:]) // never fails
	id = hex.EncodeToString(b[:])
	stored = id + "-" + name
	if k.shared != nil {
		ctx, cancel := context.WithTimeout(context.Background(), performWait)
		defer cancel()
		if err := k.shared.PutFile(ctx, stored, data); err != nil {
			return "", "", err
		}
		return id, stored, nil
	}
	if k.dir == "" {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.mem == nil {
			k.mem = map[string][]byte{}
		}
		k.mem[stored] = bytes.Clone(data)
		return id, stored, nil
	}
	if err := os.MkdirAll(k.dir, 0o700); err != nil {
		return "", "", err
	}
	root, err := os.OpenRoot(k.dir)
	if err != nil {
		return "", "", err
	}
	defer root.Close()
	tmp := "." + stored + ".tmp"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", "", err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, stored)
	}
	if err != nil {
		root.Remove(tmp)
		return "", "", err
	}
	return id, stored, nil
}

// remove forgets a stored file (a thread that was gone).
func (k *files) remove(stored string) {
	if k.shared != nil {
		ctx, cancel := context.WithTimeout(context.Background(), performWait)
		defer cancel()
		_ = k.shared.DeleteFile(ctx, stored) // gone already, or left in the bucket
		return
	}
	if k.dir == "" {
		k.mu.Lock()
		delete(k.mem, stored)
		k.mu.Unlock()
		return
	}
	if root, err := os.OpenRoot(k.dir); err == nil {
		root.Remove(stored)
		root.Close()
	}
}

// keptFiles returns the stored names of the files kept for thread t's
// messages.
func keptFiles(t *thread) []string {
	var out []string
	for _, m := range t.msgs {
		for _, f := range m.Files {
			if stored, ok := strings.CutPrefix(f.URL, filesPrefix); ok && validFileURL(f.URL) {
				stored, _ = url.PathUnescape(stored)
				out = append(out, stored)
			}
		}
	}
	return out
}

// removeGone removes the kept files of the threads deleted or forgotten
// (state.takeGone). It blocks on disk I/O.
func (a *Adapter) removeGone() {
	for _, stored := range a.st.takeGone() {
		a.files.remove(stored)
	}
}

// get returns the content of a stored file and when it was written. It
// returns an error wrapping fs.ErrNotExist when there is none; os.Root
// keeps every name inside the directory.
func (k *files) get(stored string) ([]byte, time.Time, error) {
	if k.shared != nil {
		ctx, cancel := context.WithTimeout(context.Background(), performWait)
		defer cancel()
		return k.shared.GetFile(ctx, stored)
	}
	if k.dir == "" {
		k.mu.Lock()
		defer k.mu.Unlock()
		data, ok := k.mem[stored]
		if !ok {
			return nil, time.Time{}, fs.ErrNotExist
		}
		return data, time.Time{}, nil
	}
	root, err := os.OpenRoot(k.dir)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer root.Close()
	info, err := root.Stat(stored)
	if err != nil {
		return nil, time.Time{}, err
	}
	if !info.Mode().IsRegular() {
		return nil, time.Time{}, fs.ErrNotExist
	}
	data, err := root.ReadFile(stored)
	return data, info.ModTime(), err
}

// safeName returns name as a kept file's name: its last path element,
// without control characters, path separators, characters Windows
// refuses or a leading dot, at most maxFileName bytes (keeping a short
// extension), "file" when nothing is left. safeName(safeName(s)) ==
// safeName(s).
func safeName(name string) string {
	for range 8 {
		next := safeNameOnce(name)
		if next == name {
			break
		}
		name = next
	}
	return name
}

func safeNameOnce(name string) string {
	name = strings.ToValidUTF8(name, "_")
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r), strings.ContainsRune(`:"<>|?*`, r):
			return '_'
		}
		return r
	}, name)
	name = strings.TrimLeft(strings.TrimSpace(name), ". ")
	if len(name) > maxFileName {
		ext := path.Ext(name)
		if len(ext) > 16 {
			ext = ""
		}
		cut := maxFileName - len(ext)
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut] + ext
	}
	if name == "" {
		return "file"
	}
	return name
}

// fileURL is where the page downloads a kept file.
func fileURL(stored string) string {
	return filesPrefix + url.PathEscape(stored)
}

// validFileURL reports whether s is a link fileURL makes (a state file
// is read back).
func validFileURL(s string) bool {
	rest, ok := strings.CutPrefix(s, filesPrefix)
	if !ok {
		return false
	}
	stored, err := url.PathUnescape(rest)
	return err == nil && validStored(stored) && fileURL(stored) == s
}

// validStored reports whether s is a name put returns: a 24-digit hex id,
// "-", and a name safeName leaves as it is.
func validStored(s string) bool {
	id, name, ok := strings.Cut(s, "-")
	if !ok || len(id) != 24 || safeName(name) != name {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

// Upload keeps f for thread t (in Options.FilesDir) and appends a message
// of kind "file" that shows it: its caption, a download link, and for a
// PNG, JPEG or GIF image a preview. It blocks on disk I/O; it fails for
// an ended ctx, a thread that is not the web chat's or is gone, a file
// over Limits().MaxUploadBytes or one that would make the thread keep
// more than maxThreadFileBytes (both permanent), and when the file cannot
// be written.
func (a *Adapter) Upload(ctx context.Context, t channels.ThreadRef, f channels.Upload) (channels.Handle, error) {
	if err := a.check(ctx, "upload", t); err != nil {
		return channels.Handle{}, err
	}
	if len(f.Data) > maxUploadBytes {
		return channels.Handle{}, channels.Permanent(fmt.Errorf("web: upload in %s: %s has %d bytes, more than %d", t, f.Name, len(f.Data), maxUploadBytes))
	}
	if f.Caption != "" && !utf8.ValidString(f.Caption) {
		return channels.Handle{}, channels.Permanent(fmt.Errorf("web: upload in %s: the caption is not valid UTF-8", t))
	}
	if kept, quota := a.keptBytes(t.Thread), cmp.Or(a.threadFiles, maxThreadFileBytes); kept+int64(len(f.Data)) > quota {
		return channels.Handle{}, channels.Permanent(fmt.Errorf("web: upload in %s: the thread keeps %d bytes of files already, and %s (%d bytes) would pass the %d a thread may keep; delete the thread, or start a new one", t, kept, f.Name, len(f.Data), quota))
	}
	name := safeName(channels.ShowName(f.Name))
	_, stored, err := a.files.put(name, f.Data)
	if err != nil {
		// A full or read-only disk: the lane tries again.
		return channels.Handle{}, fmt.Errorf("web: upload in %s: keep %s: %w", t, name, err)
	}
	sf := sentFile{Name: name, Type: mediaType(f), Size: len(f.Data), URL: fileURL(stored)}
	sf.Thumb, _ = thumbnail(f.Data)
	msg, err := a.st.addMessage(t.Thread, message{
		Role: roleAssistant, Author: authorAgent, Kind: string(channels.KindFile), Text: f.Caption, Files: []sentFile{sf},
	})
	if err != nil {
		a.files.remove(stored)
		return channels.Handle{}, permanent(fmt.Errorf("web: upload in %s: %w", t, err))
	}
	return channels.Handle{Thread: t, ID: channels.MessageID(msg.ID)}, nil
}

// keptBytes is the size of the files kept for thread id (0 for a thread
// that is gone).
func (a *Adapter) keptBytes(id string) int64 {
	msgs, _, err := a.st.messages(id)
	if err != nil {
		return 0
	}
	var n int64
	for _, m := range msgs {
		for _, f := range m.Files {
			if f.URL != "" {
				n += int64(f.Size)
			}
		}
	}
	return n
}

// mediaType is the type a kept file is served with: f's own, else the
// one its name or content shows; text without a charset is UTF-8.
func mediaType(f channels.Upload) string {
	mt, params, err := mime.ParseMediaType(f.Type())
	if err != nil {
		return "application/octet-stream"
	}
	if strings.HasPrefix(mt, "text/") && params["charset"] == "" {
		params["charset"] = "utf-8"
	}
	return mime.FormatMediaType(mt, params)
}

// serveFile answers GET /api/files/{name}: the kept file as an attachment
// (Content-Disposition), with its media type and nosniff (set by guard),
// so a browser saves it instead of showing it as a page of the chat.
func (s *server) serveFile(w http.ResponseWriter, r *http.Request) {
	stored := r.PathValue("name")
	if !validStored(stored) {
		writeError(w, http.StatusNotFound, "no such file")
		return
	}
	data, mod, err := s.a.files.get(stored)
	if errors.Is(err, fs.ErrNotExist) {
		writeError(w, http.StatusNotFound, "no such file")
		return
	}
	if err != nil {
		s.a.log.Error("web: read a kept file", "file", stored, "err", err)
		writeError(w, http.StatusInternalServerError, "the file cannot be read")
		return
	}
	_, name, _ := strings.Cut(stored, "-")
	ctype := mediaType(channels.Upload{Name: name, Data: data})
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	w.Header().Set("Cache-Control", "private, max-age=86400")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	http.ServeContent(w, r, "", mod, bytes.NewReader(data))
}
