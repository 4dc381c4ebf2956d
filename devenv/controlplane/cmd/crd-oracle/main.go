// Command crd-oracle answers what kube-apiserver's own code decides for a CustomResourceDefinition
// and an object sent to it, without a server: it links k8s.io/apiextensions-apiserver and
// k8s.io/apiserver at the control plane's version and runs their functions in-process.
//
// It reads one JSON request per line on stdin and writes one JSON answer per line on stdout:
//
//	{"id":"1","crd":{...},"version":"v1","namespace":"default","fieldValidation":"Strict",
//	 "object":{...},"oldObject":{...}}
//	{"id":"1","crd":{"code":201,...},"admission":{"code":200,"message":"","causes":[],"warnings":[],"object":{...}}}
//
// "crd" is the CRD's create (defaulted, converted to the internal version, strategy validation with
// CEL compilation and cost estimation); "admission" is the object's create, or update when
// "oldObject" is given (the stored object, read back as storage reads it): strict decoding, pruning,
// ObjectMeta coercion, defaulting, the custom resource strategy (OpenAPI, CEL with ratcheting,
// ObjectMeta), warnings, and the object a dry run answers. Without "object" only the CRD is checked;
// a CRD the server refuses gives no admission.
package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/version"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"
)

type request struct {
	ID              string          `json:"id"`
	CRD             json.RawMessage `json:"crd"`
	Version         string          `json:"version"`
	Namespace       string          `json:"namespace"`
	FieldValidation string          `json:"fieldValidation"`
	Object          json.RawMessage `json:"object"`
	OldObject       json.RawMessage `json:"oldObject"`
	// NameSuffix, when set, replaces the random suffix of a generated name, so that answers repeat.
	NameSuffix string `json:"nameSuffix"`
}

// observation has the shape of what a client sees: status code, message, causes, warnings, object.
type observation struct {
	Code     int32                `json:"code"`
	Message  string               `json:"message"`
	Causes   []metav1.StatusCause `json:"causes"`
	Warnings []string             `json:"warnings"`
	Object   json.RawMessage      `json:"object,omitempty"`
}

type answer struct {
	ID        string       `json:"id"`
	CRD       *observation `json:"crd,omitempty"`
	Admission *observation `json:"admission,omitempty"`
	Error     string       `json:"error,omitempty"`
}

var crdScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	apiextensionsinstall.Install(s)
	return s
}()

// warnings records what the handlers add to a request, without duplicates, as the server's recorder does.
type warnings struct {
	seen sets.Set[string]
	list []string
}

func (w *warnings) AddWarning(_, text string) {
	if w.seen == nil {
		w.seen = sets.New[string]()
	}
	if text == "" || w.seen.Has(text) {
		return
	}
	w.seen.Insert(text)
	w.list = append(w.list, text)
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for in.Scan() {
		line := in.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		var req request
		var a answer
		if err := json.Unmarshal(line, &req); err != nil {
			a.Error = "request: " + err.Error()
		} else {
			a = handle(req)
		}
		if err := enc.Encode(a); err != nil {
			fmt.Fprintln(os.Stderr, "crd-oracle:", err)
			os.Exit(1)
		}
		if err := out.Flush(); err != nil {
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "crd-oracle: reading stdin:", err)
		os.Exit(1)
	}
}

func handle(req request) (a answer) {
	a.ID = req.ID
	defer func() {
		if r := recover(); r != nil {
			a.Error = fmt.Sprintf("panic: %v", r)
		}
	}()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal(req.CRD, crd); err != nil {
		a.Error = "crd: " + err.Error()
		return a
	}
	crdObservation := createCRD(crd)
	a.CRD = &crdObservation
	if crdObservation.Code != http.StatusCreated || len(req.Object) == 0 {
		return a
	}
	admission, err := admitObject(crd, req)
	if err != nil {
		a.Error = err.Error()
		return a
	}
	a.Admission = &admission
	return a
}

// createCRD runs what the CRD's create runs: defaulting, conversion to the internal version, the
// CRD strategy's PrepareForCreate and Validate (structural schema, CEL compilation and cost).
func createCRD(crd *apiextensionsv1.CustomResourceDefinition) observation {
	crdScheme.Default(crd)
	internal := &apiextensionsinternal.CustomResourceDefinition{}
	if err := crdScheme.Convert(crd, internal, nil); err != nil {
		return statusObservation(apierrors.NewBadRequest(err.Error()), nil)
	}
	rest.FillObjectMetaSystemFields(internal)
	rec := &warnings{}
	ctx := warning.WithWarningRecorder(genericapirequest.WithNamespace(context.Background(), ""), rec)
	if err := rest.BeforeCreate(customresourcedefinition.NewStrategy(crdScheme), ctx, internal); err != nil {
		return statusObservation(err, rec.list)
	}
	// Established as the server would make it, so that its schema is what the handler serves.
	crd.Status.AcceptedNames = crd.Spec.Names
	return observation{Code: http.StatusCreated, Causes: []metav1.StatusCause{}, Warnings: orEmpty(rec.list)}
}

type servedVersion struct {
	gvk        schema.GroupVersionKind
	structural map[string]*structuralschema.Structural
	strategy   rest.RESTUpdateStrategy
	deprecated string
	preserve   bool
}

func serve(crd *apiextensionsv1.CustomResourceDefinition, versionName string) (*servedVersion, error) {
	sv := &servedVersion{structural: map[string]*structuralschema.Structural{}, preserve: crd.Spec.PreserveUnknownFields}
	var chosen *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if v.Name == versionName || (versionName == "" && v.Storage) {
			chosen = v
		}
		val, err := apiextensionshelpers.GetSchemaForVersion(crd, v.Name)
		if err != nil || val == nil {
			continue
		}
		internal := &apiextensionsinternal.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(val, internal, nil); err != nil {
			return nil, err
		}
		s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
		if err != nil {
			return nil, fmt.Errorf("structural schema of %s: %v", v.Name, err)
		}
		s = s.DeepCopy()
		if err := structuraldefaulting.PruneDefaults(s); err != nil {
			return nil, err
		}
		sv.structural[v.Name] = s
	}
	if chosen == nil {
		return nil, fmt.Errorf("no version %q", versionName)
	}
	sv.gvk = schema.GroupVersionKind{Group: crd.Spec.Group, Version: chosen.Name, Kind: crd.Spec.Names.Kind}
	if chosen.Deprecated {
		if chosen.DeprecationWarning != nil {
			sv.deprecated = *chosen.DeprecationWarning
		} else {
			sv.deprecated = defaultDeprecationWarning(chosen.Name, crd.Spec)
		}
	}

	validationSchema, err := apiextensionshelpers.GetSchemaForVersion(crd, chosen.Name)
	if err != nil {
		return nil, err
	}
	var internalSchemaProps *apiextensionsinternal.JSONSchemaProps
	var internalValidation *apiextensionsinternal.CustomResourceValidation
	if validationSchema != nil {
		internalValidation = &apiextensionsinternal.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(validationSchema, internalValidation, nil); err != nil {
			return nil, err
		}
		internalSchemaProps = internalValidation.OpenAPIV3Schema
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(internalSchemaProps)
	if err != nil {
		return nil, err
	}
	subresources, err := apiextensionshelpers.GetSubresourcesForVersion(crd, chosen.Name)
	if err != nil {
		return nil, err
	}
	var statusSpec *apiextensionsinternal.CustomResourceSubresourceStatus
	var statusValidator apiservervalidation.SchemaValidator
	if subresources != nil && subresources.Status != nil {
		statusSpec = &apiextensionsinternal.CustomResourceSubresourceStatus{}
		if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceStatus_To_apiextensions_CustomResourceSubresourceStatus(subresources.Status, statusSpec, nil); err != nil {
			return nil, err
		}
		if internalValidation != nil && internalValidation.OpenAPIV3Schema != nil && internalValidation.OpenAPIV3Schema.Properties != nil {
			if statusSchema, ok := internalValidation.OpenAPIV3Schema.Properties["status"]; ok {
				if statusValidator, _, err = apiservervalidation.NewSchemaValidator(&statusSchema); err != nil {
					return nil, err
				}
			}
		}
	}
	var scaleSpec *apiextensionsinternal.CustomResourceSubresourceScale
	if subresources != nil && subresources.Scale != nil {
		scaleSpec = &apiextensionsinternal.CustomResourceSubresourceScale{}
		if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(subresources.Scale, scaleSpec, nil); err != nil {
			return nil, err
		}
	}
	sv.strategy = customresource.NewStrategy(
		crdserverscheme.NewUnstructuredObjectTyper(),
		crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		sv.gvk,
		validator,
		statusValidator,
		sv.structural[chosen.Name],
		statusSpec,
		scaleSpec,
		chosen.SelectableFields,
	)
	return sv, nil
}

func defaultDeprecationWarning(deprecatedVersion string, crd apiextensionsv1.CustomResourceDefinitionSpec) string {
	msg := fmt.Sprintf("%s/%s %s is deprecated", crd.Group, deprecatedVersion, crd.Names.Kind)
	var newer []string
	for _, v := range crd.Versions {
		if v.Served && !v.Deprecated && version.CompareKubeAwareVersionStrings(deprecatedVersion, v.Name) < 0 {
			newer = append(newer, v.Name)
		}
	}
	if len(newer) == 0 {
		return msg
	}
	sort.Slice(newer, func(i, j int) bool {
		return version.CompareKubeAwareVersionStrings(newer[i], newer[j]) > 0
	})
	return msg + fmt.Sprintf("; use %s/%s %s", crd.Group, newer[0], crd.Names.Kind)
}

// coercer is the API server's unstructuredSchemaCoercer: ObjectMeta, pruning, nulls, coercion.
type coercer struct {
	sv                      *servedVersion
	dropInvalidMetadata     bool
	repairGeneration        bool
	returnUnknownFieldPaths bool
}

func (c coercer) apply(u *unstructured.Unstructured) ([]string, error) {
	var unknownFieldPaths []string
	kind, foundKind, err := unstructured.NestedString(u.UnstructuredContent(), "kind")
	if err != nil {
		return nil, err
	}
	apiVersion, foundAPIVersion, err := unstructured.NestedString(u.UnstructuredContent(), "apiVersion")
	if err != nil {
		return nil, err
	}
	objectMeta, foundObjectMeta, metaUnknownFields, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{
		DropMalformedFields:     c.dropInvalidMetadata,
		ReturnUnknownFieldPaths: c.returnUnknownFieldPaths,
	})
	if err != nil {
		return nil, err
	}
	unknownFieldPaths = append(unknownFieldPaths, metaUnknownFields...)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	if gv.Group == c.sv.gvk.Group && kind == c.sv.gvk.Kind {
		s := c.sv.structural[gv.Version]
		if !c.sv.preserve {
			opts := structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: c.returnUnknownFieldPaths}
			unknownFieldPaths = append(unknownFieldPaths, structuralpruning.PruneWithOptions(u.Object, s, true, opts)...)
			structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, s)
		}
		err, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, s, false, schemaobjectmeta.CoerceOptions{
			DropInvalidFields:       c.dropInvalidMetadata,
			ReturnUnknownFieldPaths: c.returnUnknownFieldPaths,
		})
		if err != nil {
			return nil, err
		}
		unknownFieldPaths = append(unknownFieldPaths, paths...)
		if c.repairGeneration && objectMeta.Generation == 0 {
			objectMeta.Generation = 1
		}
	}
	if foundKind {
		u.SetKind(kind)
	}
	if foundAPIVersion {
		u.SetAPIVersion(apiVersion)
	}
	if foundObjectMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, objectMeta); err != nil {
			return nil, err
		}
	}
	return unknownFieldPaths, nil
}

// decode is the request decoder: the JSON serializer (strict unless Ignore), the coercer, and the
// defaulter, with strict errors aggregated as the API server's schemaCoercingDecoder does.
func (sv *servedVersion) decode(body []byte, strict bool) (*unstructured.Unstructured, *schema.GroupVersionKind, error) {
	serializer := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, unstructuredscheme.NewUnstructuredCreator(), unstructuredscheme.NewUnstructuredObjectTyper(), kjson.SerializerOptions{Strict: strict})
	defaultGVK := sv.gvk
	var strictErrs []error
	obj, gvk, err := serializer.Decode(body, &defaultGVK, &unstructured.Unstructured{})
	if err != nil {
		strictErr, ok := runtime.AsStrictDecodingError(err)
		if !ok || obj == nil {
			return nil, gvk, err
		}
		strictErrs = strictErr.Errors()
	}
	u := obj.(*unstructured.Unstructured)
	unknown, err := coercer{sv: sv, returnUnknownFieldPaths: strict}.apply(u)
	if err != nil {
		return nil, gvk, err
	}
	var result error
	if strict && (len(strictErrs) > 0 || len(unknown) > 0) {
		for _, f := range unknown {
			strictErrs = append(strictErrs, fmt.Errorf(`unknown field "%s"`, f))
		}
		result = runtime.NewStrictDecodingError(strictErrs)
	}
	sv.applyDefaults(u)
	return u, gvk, result
}

func (sv *servedVersion) applyDefaults(u *unstructured.Unstructured) {
	if u.GroupVersionKind().GroupKind() == sv.gvk.GroupKind() {
		structuraldefaulting.Default(u.UnstructuredContent(), sv.structural[u.GroupVersionKind().Version])
	}
}

// readBack is what storage hands out for an object: encoded, then decoded with the storage coercer
// (malformed metadata dropped, generation repaired) and defaulted.
func (sv *servedVersion) readBack(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	data, err := u.MarshalJSON()
	if err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	if _, err := (coercer{sv: sv, dropInvalidMetadata: true, repairGeneration: true}).apply(out); err != nil {
		return nil, err
	}
	sv.applyDefaults(out)
	return out, nil
}

func admitObject(crd *apiextensionsv1.CustomResourceDefinition, req request) (observation, error) {
	sv, err := serve(crd, req.Version)
	if err != nil {
		return observation{}, err
	}
	rec := &warnings{}
	if sv.deprecated != "" {
		rec.AddWarning("", sv.deprecated)
	}
	fieldValidation := req.FieldValidation
	if fieldValidation == "" {
		fieldValidation = metav1.FieldValidationWarn
	}
	strict := fieldValidation != metav1.FieldValidationIgnore
	obj, gvk, err := sv.decode(req.Object, strict)
	if err != nil {
		strictErr, isStrict := runtime.AsStrictDecodingError(err)
		switch {
		case isStrict && obj != nil && fieldValidation == metav1.FieldValidationWarn:
			for _, e := range strictErr.Errors() {
				rec.AddWarning("", e.Error())
			}
		default:
			return statusObservation(transformDecodeError(sv.gvk, err, gvk, req.Object), rec.list), nil
		}
	}
	if gvk.GroupVersion() != sv.gvk.GroupVersion() {
		return statusObservation(apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%v)", gvk.GroupVersion().String(), sv.gvk.GroupVersion().String())), rec.list), nil
	}
	namespace := ""
	if crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
		namespace = req.Namespace
	}
	ctx := warning.WithWarningRecorder(genericapirequest.WithNamespace(context.Background(), namespace), rec)
	if len(req.OldObject) > 0 {
		return sv.update(ctx, obj, req.OldObject, namespace, rec)
	}
	return sv.create(ctx, obj, namespace, req.NameSuffix, rec)
}

func (sv *servedVersion) create(ctx context.Context, obj *unstructured.Unstructured, namespace, nameSuffix string, rec *warnings) (observation, error) {
	rest.WipeObjectMetaSystemFields(obj)
	if err := rest.EnsureObjectNamespaceMatchesRequestNamespace(namespace, obj); err != nil {
		return statusObservation(err, rec.list), nil
	}
	dedupOwnerReferences(obj, rec)
	dropManagedFields(obj)
	strategy := sv.strategy.(rest.RESTCreateStrategy)
	if len(obj.GetGenerateName()) > 0 && len(obj.GetName()) == 0 {
		if nameSuffix != "" {
			obj.SetName(obj.GetGenerateName() + nameSuffix)
		} else {
			obj.SetName(strategy.GenerateName(obj.GetGenerateName()))
		}
	}
	rest.FillObjectMetaSystemFields(obj)
	if err := rest.BeforeCreate(strategy, ctx, obj); err != nil {
		return statusObservation(err, rec.list), nil
	}
	return sv.stored(obj, rec)
}

func (sv *servedVersion) update(ctx context.Context, obj *unstructured.Unstructured, oldBody []byte, namespace string, rec *warnings) (observation, error) {
	old := &unstructured.Unstructured{}
	if err := old.UnmarshalJSON(oldBody); err != nil {
		return observation{}, fmt.Errorf("oldObject: %v", err)
	}
	old, err := sv.readBack(old)
	if err != nil {
		return observation{}, fmt.Errorf("oldObject: %v", err)
	}
	if err := rest.EnsureObjectNamespaceMatchesRequestNamespace(namespace, obj); err != nil {
		return statusObservation(err, rec.list), nil
	}
	dedupOwnerReferences(obj, rec)
	dropManagedFields(obj)
	if obj.GetResourceVersion() == "" && !sv.strategy.AllowUnconditionalUpdate(ctx) {
		err := apierrors.NewInvalid(sv.gvk.GroupKind(), obj.GetName(), field.ErrorList{
			field.Invalid(field.NewPath("metadata", "resourceVersion"), obj.GetResourceVersion(), "must be specified for an update"),
		})
		return statusObservation(err, rec.list), nil
	}
	if err := rest.BeforeUpdate(sv.strategy, ctx, obj, old); err != nil {
		return statusObservation(err, rec.list), nil
	}
	return sv.stored(obj, rec)
}

func (sv *servedVersion) stored(obj *unstructured.Unstructured, rec *warnings) (observation, error) {
	out, err := sv.readBack(obj)
	if err != nil {
		return observation{}, err
	}
	data, err := out.MarshalJSON()
	if err != nil {
		return observation{}, err
	}
	return observation{Code: http.StatusOK, Causes: []metav1.StatusCause{}, Warnings: orEmpty(rec.list), Object: data}, nil
}

// dropManagedFields stands for the handlers' field manager, which replaces the request's managed
// fields with the ones it tracks (malformed ones are reset, not refused) before validation.
func dropManagedFields(obj metav1.Object) {
	obj.SetManagedFields(nil)
}

// dedupOwnerReferences is the handlers' dedupOwnerReferencesAndAddWarning before mutating admission.
func dedupOwnerReferences(obj metav1.Object, rec *warnings) {
	refs := obj.GetOwnerReferences()
	seen := sets.New[types.UID]()
	var deduped []metav1.OwnerReference
	var duplicates []string
	for _, ref := range refs {
		if seen.Has(ref.UID) && slices.ContainsFunc(deduped, func(r metav1.OwnerReference) bool { return equality.Semantic.DeepEqual(r, ref) }) {
			duplicates = append(duplicates, string(ref.UID))
			continue
		}
		seen.Insert(ref.UID)
		deduped = append(deduped, ref)
	}
	if len(duplicates) > 0 {
		rec.AddWarning("", fmt.Sprintf(".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: %v", strings.Join(duplicates, ", ")))
		obj.SetOwnerReferences(deduped)
	}
}

func transformDecodeError(into schema.GroupVersionKind, baseErr error, gvk *schema.GroupVersionKind, body []byte) error {
	if gvk != nil && len(gvk.Kind) > 0 {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, into.Kind, baseErr))
	}
	var summary string
	switch {
	case len(body) == 0:
		summary = "<empty>"
	case body[0] == '{' && len(body) > 30:
		summary = string(body[:30]) + " ..."
	case body[0] == '{':
		summary = string(body)
	case len(body) > 30:
		summary = hex.EncodeToString(body[:30]) + " ..."
	default:
		summary = hex.EncodeToString(body)
	}
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", into.Kind, baseErr, summary))
}

func statusObservation(err error, warningList []string) observation {
	status, ok := err.(apierrors.APIStatus)
	if !ok {
		status = apierrors.NewInternalError(err)
	}
	s := status.Status()
	o := observation{Code: s.Code, Message: s.Message, Causes: []metav1.StatusCause{}, Warnings: orEmpty(warningList)}
	if s.Details != nil {
		o.Causes = append(o.Causes, s.Details.Causes...)
	}
	return o
}

func orEmpty(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
