// Shopping cart totals: line items, discounts and tax.
import { Money, money, add, multiply } from "./money";
import type { Product } from "./catalog";

export interface LineItem {
  product: Product;
  quantity: number;
}

export interface Discount {
  code: string;
  percent: number;
  minimumTotal?: Money;
}

const TAX_RATES: Record<string, number> = {
  DE: 0.19,
  FR: 0.2,
  NL: 0.21,
};

export class Cart {
  private items: LineItem[] = [];
  private discount: Discount | null = null;

  constructor(private readonly country: string) {}

  addItem(product: Product, quantity = 1): void {
    const existing = this.items.find((i) => i.product.sku === product.sku);
    if (existing) {
      existing.quantity += quantity;
    } else {
      this.items.push({ product, quantity });
    }
  }

  removeItem(sku: string): void {
    this.items = this.items.filter((i) => i.product.sku !== sku);
  }

  applyDiscount(discount: Discount): boolean {
    if (discount.minimumTotal && this.subtotal().cents < discount.minimumTotal.cents) {
      return false;
    }
    this.discount = discount;
    return true;
  }

  subtotal(): Money {
    return this.items.reduce(
      (sum, item) => add(sum, multiply(item.product.price, item.quantity)),
      money(0),
    );
  }

  total(): Money {
    let amount = this.subtotal();
    if (this.discount) {
      const off = Math.round((amount.cents * this.discount.percent) / 100);
      amount = money(amount.cents - off);
    }
    const rate = TAX_RATES[this.country] ?? 0;
    return money(Math.round(amount.cents * (1 + rate)));
  }
}

export const emptyCart = (country: string): Cart => new Cart(country);
