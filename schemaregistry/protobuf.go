package schemaregistry

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// protoMainFile is the name the registered schema is compiled under; its
// references are compiled under their reference names, the import paths.
const protoMainFile = "queuewatch-registry-schema.proto"

// maxMessageIndexes bounds the message-index array: nesting that deep is
// a corrupt payload, not a schema.
const maxMessageIndexes = 64

// protoSchema is a compiled .proto file and the types it can reach (for
// google.protobuf.Any and extensions).
type protoSchema struct {
	file      protoreflect.FileDescriptor
	types     *dynamicpb.Types
	marshal   protojson.MarshalOptions
	unmarshal proto.UnmarshalOptions
}

// parseProto compiles text with refs (import path and text); imports of
// google/protobuf/*.proto are built in.
func parseProto(ctx context.Context, text string, refs []resolved) (*protoSchema, error) {
	srcs := map[string]string{protoMainFile: text}
	for _, ref := range refs {
		srcs[ref.name] = ref.schema
	}
	// A schema is .proto text or, as some serializers register it (the
	// Python ProtobufSerializer) and some registries hand it back, a
	// base64 FileDescriptorProto.
	resolve := protocompile.ResolverFunc(func(path string) (protocompile.SearchResult, error) {
		text, ok := srcs[path]
		if !ok {
			return protocompile.SearchResult{}, protoregistry.NotFound
		}
		if fdp := descriptorFromBase64(text); fdp != nil {
			fdp.Name = proto.String(path)
			return protocompile.SearchResult{Proto: fdp}, nil
		}
		return protocompile.SearchResult{Source: strings.NewReader(text)}, nil
	})
	var first error
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(resolve),
		// The first error is the one worth showing; the default reporter
		// would also stop at it.
		Reporter: reporter.NewReporter(func(err reporter.ErrorWithPos) error {
			if first == nil {
				first = err
			}
			return err
		}, nil),
	}
	files, err := c.Compile(ctx, protoMainFile)
	if err != nil {
		if first != nil {
			err = first
		}
		// Positions name the internal file name; the schema is the
		// registry's, so drop it.
		return nil, errors.New(strings.TrimPrefix(err.Error(), protoMainFile+":"))
	}
	fd := files[0]
	reg := new(protoregistry.Files)
	if err := registerFile(reg, fd); err != nil {
		return nil, err
	}
	types := dynamicpb.NewTypes(reg)
	return &protoSchema{
		file:  fd,
		types: types,
		marshal: protojson.MarshalOptions{
			UseProtoNames:   true,
			EmitUnpopulated: true,
			Resolver:        types,
		},
		unmarshal: proto.UnmarshalOptions{Resolver: types, RecursionLimit: maxDepth},
	}, nil
}

// descriptorFromBase64 is text as a base64 FileDescriptorProto, or nil
// when it is not one (.proto text always has spaces or semicolons).
func descriptorFromBase64(text string) *descriptorpb.FileDescriptorProto {
	text = strings.TrimSpace(text)
	if text == "" || strings.ContainsAny(text, " \t\n;{") {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil
	}
	fdp := new(descriptorpb.FileDescriptorProto)
	if proto.Unmarshal(b, fdp) != nil {
		return nil
	}
	// protoc's generated code drops json_name from the descriptors it
	// embeds, and protocompile reads a missing one as "".
	for _, m := range fdp.GetMessageType() {
		setJSONNames(m)
	}
	for _, f := range fdp.GetExtension() {
		setJSONName(f)
	}
	return fdp
}

func setJSONNames(m *descriptorpb.DescriptorProto) {
	for _, f := range m.GetField() {
		setJSONName(f)
	}
	for _, f := range m.GetExtension() {
		setJSONName(f)
	}
	for _, n := range m.GetNestedType() {
		setJSONNames(n)
	}
}

// setJSONName sets the JSON name protoc gives a field: underscores
// dropped, the letter after each one upper-cased.
func setJSONName(f *descriptorpb.FieldDescriptorProto) {
	if f.JsonName != nil {
		return
	}
	var b strings.Builder
	upper := false
	for _, c := range f.GetName() {
		switch {
		case c == '_':
			upper = true
		case upper && 'a' <= c && c <= 'z':
			b.WriteRune(c - 'a' + 'A')
			upper = false
		default:
			b.WriteRune(c)
			upper = false
		}
	}
	f.JsonName = proto.String(b.String())
}

// registerFile registers fd and its imports, each once.
func registerFile(reg *protoregistry.Files, fd protoreflect.FileDescriptor) error {
	if _, err := reg.FindFileByPath(fd.Path()); err == nil {
		return nil
	}
	imports := fd.Imports()
	for i := range imports.Len() {
		if err := registerFile(reg, imports.Get(i).FileDescriptor); err != nil {
			return err
		}
	}
	return reg.RegisterFile(fd)
}

// decode decodes payload: the message indexes, then the message.
func (s *protoSchema) decode(payload []byte) (json.RawMessage, error) {
	md, rest, err := s.message(payload)
	if err != nil {
		return nil, err
	}
	msg := dynamicpb.NewMessage(md)
	if err := s.unmarshal.Unmarshal(rest, msg); err != nil {
		return nil, fmt.Errorf("%s: %w", md.FullName(), err)
	}
	b, err := s.marshal.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", md.FullName(), err)
	}
	if len(b) > maxValueJSON {
		return nil, errTooLarge
	}
	// protojson varies its whitespace on purpose; compact it so the same
	// message always shows the same.
	var out bytes.Buffer
	out.Grow(len(b))
	if err := json.Compact(&out, b); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// message reads the message-index array at the start of payload
// (zigzag varints: a count, then that many indexes; a count of 0 is the
// shorthand for [0]) and returns the message it names and the rest.
func (s *protoSchema) message(payload []byte) (protoreflect.MessageDescriptor, []byte, error) {
	r := bytes.NewReader(payload)
	count, err := binary.ReadVarint(r)
	if err != nil {
		return nil, nil, fmt.Errorf("message indexes: %w", eofMessage(err))
	}
	if count < 0 || count > maxMessageIndexes {
		return nil, nil, fmt.Errorf("message indexes: invalid count %d", count)
	}
	indexes := []int64{0}
	if count > 0 {
		indexes = make([]int64, count)
		for i := range indexes {
			if indexes[i], err = binary.ReadVarint(r); err != nil {
				return nil, nil, fmt.Errorf("message indexes: %w", eofMessage(err))
			}
		}
	}
	msgs := s.file.Messages()
	var md protoreflect.MessageDescriptor
	for _, i := range indexes {
		if i < 0 || i >= int64(msgs.Len()) {
			return nil, nil, fmt.Errorf("message indexes %v: no message %d in %s", indexes, i, where(md))
		}
		md = msgs.Get(int(i))
		msgs = md.Messages()
	}
	return md, payload[len(payload)-r.Len():], nil
}

func where(md protoreflect.MessageDescriptor) string {
	if md == nil {
		return "the schema"
	}
	return string(md.FullName())
}

func eofMessage(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("payload ends in the middle of them")
	}
	return err
}
