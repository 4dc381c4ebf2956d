/** A Go struct value for printing: encoding/json writes struct fields in declaration order, not sorted. */
export class GoStruct {
  readonly fields: readonly (readonly [string, unknown])[];

  constructor(fields: readonly (readonly [string, unknown])[]) {
    this.fields = fields;
  }
}
