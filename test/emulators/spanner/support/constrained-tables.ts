/**
 * Tables whose writes can break a constraint or touch many indexes, per dialect: Orders (a foreign key to a
 * Customers table with an `Id` key, which the caller defines, and a CHECK on Qty) and Wide (three indexed
 * columns, so one row is several mutations).
 */
import type { Dialect } from '../../../../shared/domain/change-record';

export const ORDERS_AND_WIDE_DDL: Record<Dialect, string[]> = {
  GOOGLE_STANDARD_SQL: [
    `CREATE TABLE Orders (Id INT64 NOT NULL, Customer INT64, Qty INT64, Note STRING(MAX),
     CONSTRAINT OrdersCustomer FOREIGN KEY (Customer) REFERENCES Customers (Id),
     CONSTRAINT QtyPositive CHECK (Qty > 0)) PRIMARY KEY (Id)`,
    'CREATE TABLE Wide (Id INT64 NOT NULL, A STRING(MAX), B STRING(MAX), C STRING(MAX)) PRIMARY KEY (Id)',
    'CREATE INDEX WideA ON Wide (A)',
    'CREATE INDEX WideB ON Wide (B)',
    'CREATE INDEX WideC ON Wide (C)',
  ],
  POSTGRESQL: [
    `CREATE TABLE orders (id bigint NOT NULL PRIMARY KEY, customer bigint, qty bigint, note text,
     CONSTRAINT orders_customer FOREIGN KEY (customer) REFERENCES customers (id),
     CONSTRAINT qty_positive CHECK (qty > 0))`,
    'CREATE TABLE wide (id bigint NOT NULL PRIMARY KEY, a text, b text, c text)',
    'CREATE INDEX wide_a ON wide (a)',
    'CREATE INDEX wide_b ON wide (b)',
    'CREATE INDEX wide_c ON wide (c)',
  ],
};
